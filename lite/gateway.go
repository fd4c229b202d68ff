package lite

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/telegram"
)

// Gateway is one way people reach their agents besides the HTTP API: the
// Telegram bot, a gateway plugin. Serve starts a list of them and stops
// them at shutdown; schedules, notifications and delegation reach a chat
// through Deliver.
type Gateway interface {
	// Name is the gateway's name in sessions and routes ("telegram", a
	// plugin's name).
	Name() string
	// Start begins serving in the background and returns: the gateway
	// connects, and reconnects, on its own. ctx bounds the start only; a
	// gateway runs until Stop.
	Start(ctx context.Context) error
	// Stop stops taking messages and waits, until ctx ends, for the
	// replies being delivered; what is left is delivered at the next
	// start.
	Stop(ctx context.Context) error
	// Deliver sends a message nobody asked for in that turn (a schedule's
	// result, a notification, a subagent's report) to a chat the gateway
	// serves. It returns once the chat has it, or with a one-sentence
	// error saying why it cannot have it.
	Deliver(ctx context.Context, m Outbound) error
}

// Outbound is a message for a chat.
type Outbound struct {
	// ChatID is the chat, in the gateway's own ids (a session's chat_id).
	ChatID string
	Text   string
}

// ErrNotServed is matched (errors.Is) by Deliver's error for a chat the
// gateway does not serve: no one there ever talked to an agent through it.
var ErrNotServed = errors.New("this gateway serves no such chat: the chat must message the agent first")

// gatewayStopTimeout bounds a gateway's stop at shutdown: the replies it
// is delivering get that long (a plugin: then shutdown, SIGTERM, SIGKILL);
// what is left is delivered at the next start.
const gatewayStopTimeout = 15 * time.Second

// buildGateways returns the gateways the config enables, not started: the
// Telegram bot, then one per gateways.external entry.
func buildGateways(app *App, log *slog.Logger) (gatewaySet, error) {
	var gws gatewaySet
	if app.Config.Gateways.Telegram.Enabled {
		tg, err := NewTelegram(app, telegram.Options{Logger: log})
		if err != nil {
			return nil, err
		}
		app.SetLastPoll(tg.LastPoll)
		gws = append(gws, tg)
	}
	plugins, err := PluginGateways(app, log)
	if err != nil {
		return nil, err
	}
	return append(gws, plugins...), nil
}

// gatewaySet is the gateways Serve runs.
type gatewaySet []Gateway

// start starts each gateway in order; on a failure it stops those
// already started and returns the error.
func (gs gatewaySet) start(ctx context.Context, log *slog.Logger) (gatewaySet, error) {
	var started gatewaySet
	for _, g := range gs {
		if err := g.Start(ctx); err != nil {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gatewayStopTimeout)
			started.stop(stopCtx, log)
			cancel()
			return nil, err
		}
		started = append(started, g)
	}
	return started, nil
}

// stop stops every gateway at once, each bounded by ctx.
func (gs gatewaySet) stop(ctx context.Context, log *slog.Logger) {
	var wg sync.WaitGroup
	for _, g := range gs {
		wg.Go(func() {
			if err := g.Stop(ctx); err != nil {
				log.Warn("a gateway did not stop cleanly", "gateway", g.Name(), "err", err)
			}
		})
	}
	wg.Wait()
}
