package lite

import (
	"context"
	"log/slog"
	"sort"
	"sync"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/plugin"
)

// StartPlugins starts one supervised gateway plugin per
// gateways.external entry. The plugins run until ctx ends or stop is
// called; stop returns once every plugin has exited (each gets a
// shutdown, then SIGTERM and SIGKILL after a grace period). Call it
// before app.Close: the plugins' sessions live in app's loop.
func StartPlugins(ctx context.Context, app *App, log *slog.Logger) (stop func(), err error) {
	return startPlugins(ctx, app, log, plugin.Timing{}, nil)
}

func startPlugins(ctx context.Context, app *App, log *slog.Logger, t plugin.Timing, observe func(string, plugin.Status)) (func(), error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var gws []*plugin.Gateway
	stop := func() {
		var wg sync.WaitGroup
		for _, g := range gws {
			wg.Go(g.Stop)
		}
		wg.Wait()
	}
	for _, c := range app.Config.Gateways.External {
		o := plugin.Options{
			Name: c.Name, Command: c.Command, Args: c.Args, Env: pluginEnv(c.Env), Restart: c.Restart,
			Sessions: pluginSessions{app.Chats()}, Runtime: app.Loop, Logger: log, Timing: t,
		}
		if observe != nil {
			name := c.Name
			o.Observe = func(s plugin.Status) { observe(name, s) }
		}
		g, err := plugin.Start(ctx, o)
		if err != nil {
			stop()
			return nil, err
		}
		gws = append(gws, g)
	}
	return stop, nil
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
