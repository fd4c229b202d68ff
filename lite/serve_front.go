package lite

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/doctor"
	"github.com/agnx-lite/agnx-lite/lite/hooks"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/lite/systemd"
	"github.com/agnx-lite/agnx-lite/lite/webui"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// frontDoor is the HTTP API on its listener. Stop stops accepting at
// once, gives running turns the drain to end, ends the event streams that
// follow them, and waits closeTimeout more for the handlers to return.
type frontDoor struct {
	srv    *http.Server
	api    *httpapi.Server
	ln     net.Listener
	loop   *runtime.Loop
	drain  time.Duration
	log    *slog.Logger
	served chan error // the server's end, when it ends by itself
}

// newFrontDoor builds the HTTP API over the App; shutdown is what an
// admin's stop request calls.
func newFrontDoor(app *App, ln net.Listener, base, version string, shutdown func(), drain time.Duration, log *slog.Logger) *frontDoor {
	cfg := app.Config
	sc := &cfg.Server
	id, err := instanceID(cfg.DataDir)
	if err != nil {
		log.Warn("cannot keep this daemon's id in the data dir; the web page's cookie gets the plain name agnx_web", "err", err)
	}
	api := httpapi.New(httpapi.Options{
		Loop: app.Loop, Agents: registry{app}, Version: version, Workspace: cfg.DataDir,
		APIToken: sc.APIToken.Value(), AdminToken: sc.AdminToken.Value(),
		KeepAlive:      seconds(sc.KeepAliveIntervalSeconds, -1),
		RequestTimeout: seconds(sc.RequestTimeoutSeconds, 0),
		Shutdown:       shutdown, BaseURL: base, Logger: log, Metrics: app.WriteMetrics,
		Gateways: app.GatewayStates, MCPServers: app.MCPServers, RSS: app.RSS, SearchMemory: app.searchMemoryAPI,
		Schedules: app.Schedules(), Tasks: app.Tasks(),
		// The name the server is bound to is one clients reach it by.
		AllowedHosts:   append(slices.Clip(sc.AllowedHosts), sc.Host),
		TrustedProxies: sc.TrustedProxies, InstanceID: id,
		AllowedOrigins: sc.AllowedOrigins, PublicAgents: sc.PublicAgents,
		Hooks: hooks.New(hooks.Options{Hooks: cfg.Hooks, Loop: app.Loop, Chats: hookChats{app}, Logger: log}),
		Usage: app, UI: webui.Embedded(),
		Health: doctor.NewHealth(app.healthOptions()).Facts,
	})
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       seconds(sc.IdleTimeoutSeconds, 0),
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	ln = httpapi.ConnLimits{Max: sc.MaxConnections, PerClient: sc.MaxConnectionsPerClient,
		Streams: sc.MaxStreams}.Limit(srv, ln)
	return &frontDoor{srv: srv, api: api, ln: ln, loop: app.Loop, drain: drain, log: log}
}

func (f *frontDoor) Start(context.Context) error {
	f.served = make(chan error, 1)
	go func() { f.served <- f.srv.Serve(f.ln) }()
	return nil
}

func (f *frontDoor) Stop(context.Context) error {
	if f.served == nil {
		return f.ln.Close()
	}
	closing := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), f.drain+closeTimeout)
		defer cancel()
		closing <- f.srv.Shutdown(ctx) // stops accepting at once, then waits for handlers
	}()
	drainCtx, cancel := context.WithTimeout(context.Background(), f.drain)
	if err := f.loop.Drain(drainCtx); err != nil {
		f.log.Warn("turns still running at shutdown; they are interrupted or resume at the next start", "err", err)
	}
	cancel()
	f.api.Close() // ends event streams once the turns they follow are over
	if err := <-closing; err != nil {
		f.log.Warn("http server did not close cleanly", "err", err)
	}
	return nil
}

// announce is the daemon's ready: once the loop runs (/readyz answers
// 200; on a loaded box its goroutine may not have started yet) it writes
// serve.json for the CLI, logs the address, tells ServeOptions.Ready and
// systemd (Type=notify). Its Stop tells systemd the daemon is stopping.
type announce struct {
	app   *App
	base  string
	ready func(baseURL string)
	log   *slog.Logger
}

func (r *announce) Start(ctx context.Context) error {
	cfg := r.app.Config
	select {
	case <-r.app.Loop.Ready():
	case <-r.app.Loop.Done():
		return errors.New("the runtime stopped while starting: see the log above")
	case <-ctx.Done():
	}
	if err := config.WriteDaemon(cfg, r.base); err != nil {
		r.log.Warn("cannot write serve.json; the CLI will find the daemon from the config", "err", err)
	}
	r.log.Info("ready", "url", r.base, "pid", os.Getpid(), "data_dir", cfg.DataDir, "agents_dir", cfg.AgentsDir)
	for _, w := range cfg.Warnings {
		r.log.Warn("config: " + w)
	}
	if r.ready != nil {
		r.ready(r.base)
	}
	_ = systemd.Notify("READY=1\nSTATUS=serving on " + r.base)
	return nil
}

func (r *announce) Stop(context.Context) error {
	_ = systemd.Notify("STOPPING=1\nSTATUS=draining running turns")
	return nil
}

// watchdog pings systemd's watchdog (WatchdogSec) from the event loop: a
// loop that is stuck stops answering Ping, the pings stop, and systemd
// restarts the daemon. Without WatchdogSec it does nothing.
type watchdog struct {
	loop   *runtime.Loop
	log    *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (w *watchdog) Start(ctx context.Context) error {
	iv, ok := systemd.WatchdogInterval()
	if !ok {
		return nil
	}
	ctx, w.cancel = context.WithCancel(ctx)
	w.wg.Go(func() {
		systemd.RunWatchdog(ctx, iv, func(ctx context.Context) error {
			err := w.loop.Ping(ctx)
			if err != nil {
				w.log.Warn("the event loop did not answer the watchdog", "err", err)
			}
			return err
		})
	})
	return nil
}

func (w *watchdog) Stop(context.Context) error {
	if w.cancel != nil {
		w.cancel()
	}
	w.wg.Wait()
	return nil
}
