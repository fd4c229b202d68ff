package lite

import (
	"context"
	"fmt"
	"sync"
)

// Follower is a Gateway that can deliver a session it did not start the
// turn of: a schedule's task, a webhook's message, a notice posted to a
// chat's session. Follow has the gateway deliver what the session says
// from now on (and what it still owes) to the chat, as it delivers its
// own turns' replies: durably, never twice.
type Follower interface {
	Follow(ctx context.Context, sessionID, chatID string) error
}

// gatewayList is the gateways Serve started, by name, for the deliver
// path; empty outside serve.
type gatewayList struct {
	mu  sync.RWMutex
	gws map[string]Gateway
}

func (l *gatewayList) set(gws gatewaySet) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gws = make(map[string]Gateway, len(gws))
	for _, g := range gws {
		l.gws[g.Name()] = g
	}
}

// Gateway returns the running gateway of that name.
func (a *App) Gateway(name string) (Gateway, bool) {
	a.gateways.mu.RLock()
	defer a.gateways.mu.RUnlock()
	g, ok := a.gateways.gws[name]
	return g, ok
}

// Follow has the gateway deliver the session's new messages to its chat
// (see Follower). A session of no gateway (HTTP, CLI) needs nothing: its
// clients read it.
func (a *App) Follow(ctx context.Context, gateway, sessionID, chatID string) error {
	if gateway == "" {
		return nil
	}
	g, ok := a.Gateway(gateway)
	if !ok {
		return fmt.Errorf("gateway %q is not running: its chat gets the message when it starts", gateway)
	}
	f, ok := g.(Follower)
	if !ok {
		return fmt.Errorf("gateway %q cannot deliver messages it was not asked for", gateway)
	}
	return f.Follow(ctx, sessionID, chatID)
}
