package lite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"sync"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/inbox"
	"github.com/agnx-lite/agnx-lite/lite/plugin"
)

// PluginGateways returns one Gateway per gateways.external entry, not
// started; Serve starts and stops them with the others. A plugin's
// Deliver reaches a chat that has a session through that plugin, and
// says so in one sentence (nothing is queued) when the plugin is down.
func PluginGateways(app *App, log *slog.Logger) ([]Gateway, error) {
	return pluginGateways(app, log, plugin.Timing{}, nil)
}

func pluginGateways(app *App, log *slog.Logger, t plugin.Timing, observe func(string, plugin.Status)) ([]Gateway, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var gws []Gateway
	for _, c := range app.Config.Gateways.External {
		o := plugin.Options{
			Name: c.Name, Command: c.Command, Args: c.Args, Env: pluginEnv(c.Env), Restart: c.Restart,
			Sessions: pluginSessions{app.Chats()}, Runtime: app.Loop, Logger: log, Timing: t,
		}
		name := c.Name
		o.Observe = func(s plugin.Status) {
			app.plugins.record(name, s)
			if observe != nil {
				observe(name, s)
			}
		}
		g, err := plugin.New(o)
		if err != nil {
			return nil, fmt.Errorf("gateways.external %s: %w", c.Name, err)
		}
		gws = append(gws, &pluginGateway{g: g, chats: app.Chats()})
	}
	return gws, nil
}

// pluginGateway is a gateway plugin as a Gateway.
type pluginGateway struct {
	g     *plugin.Gateway
	chats *chats.Chats
}

var (
	_ Gateway  = (*pluginGateway)(nil)
	_ Follower = (*pluginGateway)(nil)
)

func (p *pluginGateway) Name() string                    { return p.g.Name() }
func (p *pluginGateway) Start(ctx context.Context) error { return p.g.Start(ctx) }
func (p *pluginGateway) Stop(ctx context.Context) error  { return p.g.Stop(ctx) }

// Deliver sends m through the plugin's send_message to a chat that has a
// session through this plugin, and returns once the plugin acknowledged
// it. A plugin that is down (restarting) gets nothing: the error says so.
func (p *pluginGateway) Deliver(ctx context.Context, m Outbound) error {
	if _, _, err := p.chats.Current(p.g.Name(), m.ChatID); errors.Is(err, chats.ErrNoChat) {
		return ErrNotServed
	} else if err != nil {
		return err
	}
	return p.g.Send(ctx, m.ChatID, m.Text)
}

// Follow has the plugin's chat, one that has a session through this
// plugin, follow the session from what it has not seen (see
// plugin.Gateway.Follow): durably, never twice.
func (p *pluginGateway) Follow(ctx context.Context, sessionID, chatID string) error {
	if _, _, err := p.chats.Current(p.g.Name(), chatID); errors.Is(err, chats.ErrNoChat) {
		return ErrNotServed
	} else if err != nil {
		return err
	}
	return p.g.Follow(ctx, sessionID, chatID)
}

// pluginEnv turns gateways.external[].env into KEY=value pairs, in a
// stable order. The values are secrets: they go to the child only.
func pluginEnv(env map[string]config.Secret) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v.Value())
	}
	sort.Strings(out)
	return out
}

// pluginSessions gives plugins the chat→session map, with access
// refusals as *agents.AccessError.
type pluginSessions struct{ c *chats.Chats }

var _ plugin.Sessions = pluginSessions{}

func (s pluginSessions) Session(ctx context.Context, in agents.Inbound) (string, error) {
	sid, _, err := s.c.Session(ctx, in)
	return sid, err
}

func (s pluginSessions) Admit(ctx context.Context, in agents.Inbound, create bool) (inbox.Admission, error) {
	return s.c.Admit(ctx, in, create)
}

func (s pluginSessions) NewSession(ctx context.Context, in agents.Inbound, agent string) (string, error) {
	return s.c.NewSession(ctx, in, agent)
}

// pluginStates is what each gateway plugin last reported of itself: a
// sentence for serve status (GET /api/admin/v1/status "gateways").
type pluginStates struct {
	mu sync.Mutex
	m  map[string]string
}

func (p *pluginStates) record(name string, s plugin.Status) {
	var line string
	switch s.State {
	case plugin.StateStarted, plugin.StateStopping, plugin.StateStopped, plugin.StateExited, plugin.StateBackoff:
		line = string(s.State)
		if s.Err != nil {
			line += ": " + s.Err.Error()
		}
	case plugin.StateReady, plugin.StateAuthenticated:
		line = "ready"
		if s.State == plugin.StateAuthenticated {
			line = "paired"
		}
	case plugin.StateAuthRequired:
		line = "waiting to be paired with its platform"
		if a := s.Auth; a != nil {
			// The code itself stays in the log: whoever holds it can pair
			// with the platform, and the status is an API answer.
			switch a.Method {
			case plugin.AuthPairCode:
				line += fmt.Sprintf(": enter the code shown in the daemon's log (valid %d s)", a.ExpiresIn)
			default:
				line += fmt.Sprintf(": scan the QR code in the daemon's log (valid %d s)", a.ExpiresIn)
			}
		}
	default:
		return // dropped commands are not a state
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]string{}
	}
	p.m[name] = line
}

// GatewayStates is what each gateway plugin last reported of itself, by
// name: "ready", "waiting to be paired with its platform: ...", "backoff:
// ...". serve status shows it.
func (a *App) GatewayStates() map[string]string {
	a.plugins.mu.Lock()
	defer a.plugins.mu.Unlock()
	return maps.Clone(a.plugins.m)
}
