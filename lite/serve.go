package lite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/hooks"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/lite/systemd"
	"github.com/agnx-lite/agnx-lite/lite/webui"
)

// Shutdown bounds: running turns get drainTimeout to finish, the HTTP
// server closeTimeout more to let its handlers return.
const (
	drainTimeout = 10 * time.Second
	closeTimeout = 5 * time.Second
)

// ServeOptions tune Serve.
type ServeOptions struct {
	Options
	Version string
	// DrainTimeout is how long running turns get to finish at shutdown;
	// 0 means 10 s.
	DrainTimeout time.Duration
	// Ready is called once the server accepts connections, with its base
	// URL.
	Ready func(baseURL string)
}

// Serve runs the daemon until ctx ends or an admin asks it to stop: the
// loop, the store and the HTTP API. Stopping is graceful: no new
// connection or turn is accepted, running turns get drainTimeout to end
// (then those of pause agents are marked interrupted and those of continue
// agents resume at the next start), everything is committed, the database
// is closed.
func Serve(ctx context.Context, cfg *config.Config, o *ServeOptions) error {
	if err := checkBind(cfg); err != nil {
		return err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
		o.Logger = log
	}
	app, err := Open(cfg, &o.Options)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(cfg.Server.Host, strconv.Itoa(cfg.Server.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		app.Close()
		return fmt.Errorf("cannot listen on %s: %v (is another server on that port? set server.port or use -p)", addr, err)
	}
	stopGateways, err := startGateways(app, log)
	if err != nil {
		ln.Close()
		app.Close()
		return err
	}
	app.runSchedules() // after the gateways: a firing finds its chat's
	app.runTasks()
	base := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	sc := &cfg.Server
	id, err := instanceID(cfg.DataDir)
	if err != nil {
		log.Warn("cannot keep this daemon's id in the data dir; the web page's cookie gets the plain name agnx_web", "err", err)
	}
	api := httpapi.New(httpapi.Options{
		Loop: app.Loop, Agents: registry{app}, Version: o.Version, Workspace: cfg.DataDir,
		APIToken: sc.APIToken.Value(), AdminToken: sc.AdminToken.Value(),
		KeepAlive:      seconds(sc.KeepAliveIntervalSeconds, -1),
		RequestTimeout: seconds(sc.RequestTimeoutSeconds, 0),
		Shutdown:       stop, BaseURL: base, Logger: log, Metrics: app.WriteMetrics,
		Gateways: app.GatewayStates, MCPServers: app.MCPServers, RSS: app.RSS, SearchMemory: app.searchMemoryAPI,
		Schedules: app.Schedules(), Tasks: app.Tasks(),
		// The name the server is bound to is one clients reach it by.
		AllowedHosts:   append(slices.Clip(sc.AllowedHosts), sc.Host),
		TrustedProxies: sc.TrustedProxies, InstanceID: id,
		AllowedOrigins: sc.AllowedOrigins, PublicAgents: sc.PublicAgents,
		Hooks: hooks.New(hooks.Options{Hooks: cfg.Hooks, Loop: app.Loop, Chats: hookChats{app}, Logger: log}),
		Usage: app, UI: webui.Embedded(),
		Health: newHealthProbe(app).facts,
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
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	// Ready means /readyz answers 200: the loop must run first (on a
	// loaded box its goroutine may not have started yet).
	select {
	case <-app.Loop.Ready():
	case <-app.Loop.Done():
		_ = srv.Close()
		<-served
		return errors.New("the runtime stopped while starting: see the log above")
	case <-ctx.Done():
	}
	if err := config.WriteDaemon(cfg, base); err != nil {
		log.Warn("cannot write serve.json; the CLI will find the daemon from the config", "err", err)
	}
	defer os.Remove(cfg.DaemonFile())
	log.Info("ready", "url", base, "pid", os.Getpid(), "data_dir", cfg.DataDir, "agents_dir", cfg.AgentsDir)
	for _, w := range cfg.Warnings {
		log.Warn("config: " + w)
	}
	if o.Ready != nil {
		o.Ready(base)
	}
	app.hb.start() // after ready: finding the heartbeats never delays it
	// Retention's first sweep a minute after ready; not under ctx, which
	// ends when shutdown begins: Close stops it, before the loop.
	_ = app.retain.Start(context.Background())
	watchdog := notifySystemd(ctx, app, base, log)
	defer func() { stop(); watchdog.Wait() }()
	select {
	case <-ctx.Done():
	case err := <-served:
		log.Error("http server stopped", "err", err)
	case <-app.Loop.Done():
		// It stopped on its own: the database is damaged. Close returns why.
		log.Error("the event loop stopped")
	}
	log.Info("shutting down")
	_ = systemd.Notify("STOPPING=1\nSTATUS=draining running turns")
	app.stopSchedules() // nothing fires while the turns drain
	app.stopTasks()     // nor starts
	drain := o.DrainTimeout
	if drain <= 0 {
		drain = drainTimeout
	}
	return shutdown(app, api, srv, log, drain, stopGateways)
}

// notifySystemd tells systemd the daemon is ready (Type=notify) and, with
// WatchdogSec set, pings its watchdog from the event loop: a loop that is
// stuck stops answering Ping, the pings stop, and systemd restarts it. The
// pinging stops when ctx ends; wait for it with the returned group.
func notifySystemd(ctx context.Context, app *App, base string, log *slog.Logger) *sync.WaitGroup {
	_ = systemd.Notify("READY=1\nSTATUS=serving on " + base)
	var wg sync.WaitGroup
	if iv, ok := systemd.WatchdogInterval(); ok {
		wg.Go(func() {
			systemd.RunWatchdog(ctx, iv, func(ctx context.Context) error {
				err := app.Loop.Ping(ctx)
				if err != nil {
					log.Warn("the event loop did not answer the watchdog", "err", err)
				}
				return err
			})
		})
	}
	return &wg
}

// startGateways starts the Telegram gateway (when enabled) and the plugin
// gateways; the returned func stops them all, each within
// gatewayStopTimeout. Gateways live until the turns they started are
// over, so they are not tied to Serve's ctx, which ends when shutdown
// begins. The Telegram gateway's last successful poll goes to the metrics.
func startGateways(app *App, log *slog.Logger) (func(), error) {
	gws, err := buildGateways(app, log)
	if err != nil {
		return nil, err
	}
	started, err := gws.start(context.Background(), log)
	if err != nil {
		return nil, err
	}
	app.gateways.set(started)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), gatewayStopTimeout)
		defer cancel()
		started.stop(ctx, log)
	}, nil
}

func shutdown(app *App, api *httpapi.Server, srv *http.Server, log *slog.Logger, drain time.Duration, stopGateways func()) error {
	closing := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), drain+closeTimeout)
		defer cancel()
		closing <- srv.Shutdown(ctx) // stops accepting at once, then waits for handlers
	}()
	drainCtx, cancel := context.WithTimeout(context.Background(), drain)
	if err := app.Loop.Drain(drainCtx); err != nil {
		log.Warn("turns still running at shutdown; they are interrupted or resume at the next start", "err", err)
	}
	cancel()
	api.Close() // ends event streams once the turns they follow are over
	stopGateways()
	if err := <-closing; err != nil {
		log.Warn("http server did not close cleanly", "err", err)
	}
	err := app.Close()
	log.Info("stopped")
	return err
}

// ErrBadConfig is matched (errors.Is) by errors a restart cannot fix: the
// configuration must change first (systemd is told not to retry them).
var ErrBadConfig = errors.New("bad configuration")

type configError struct{ error }

func (configError) Is(target error) bool { return target == ErrBadConfig }

// checkBind refuses to serve clients beyond this machine without a token
// that can guard it (config.Server.CheckBind), as ErrBadConfig. The config
// was validated, but flags may have changed the host since.
func checkBind(cfg *config.Config) error {
	if err := cfg.Server.CheckBind(); err != nil {
		return configError{err}
	}
	return nil
}

// seconds turns a config value into a duration; 0 means def.
func seconds(n int, def time.Duration) time.Duration { return config.Seconds(n, def) }
