package lite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"

	"github.com/agnx-lite/agnx-lite/agents"
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
		if observe != nil {
			name := c.Name
			o.Observe = func(s plugin.Status) { observe(name, s) }
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
	chats *Chats
}

var _ Gateway = (*pluginGateway)(nil)

func (p *pluginGateway) Name() string                    { return p.g.Name() }
func (p *pluginGateway) Start(ctx context.Context) error { return p.g.Start(ctx) }
func (p *pluginGateway) Stop(ctx context.Context) error  { return p.g.Stop(ctx) }

// Deliver sends m through the plugin's send_message to a chat that has a
// session through this plugin, and returns once the plugin acknowledged
// it. A plugin that is down (restarting) gets nothing: the error says so.
func (p *pluginGateway) Deliver(ctx context.Context, m Outbound) error {
	if _, _, err := p.chats.Current(p.g.Name(), m.ChatID); errors.Is(err, ErrNoChat) {
		return ErrNotServed
	} else if err != nil {
		return err
	}
	return p.g.Send(ctx, m.ChatID, m.Text)
}

// pluginEnv turns gateways.external[].env into KEY=value pairs, in a
// stable order. The values are secrets: they go to the child only.
func pluginEnv(env map[string]Secret) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v.Value())
	}
	sort.Strings(out)
	return out
}

// pluginSessions gives plugins the chat→session map, with access
// refusals as *agents.AccessError.
type pluginSessions struct{ c *Chats }

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
