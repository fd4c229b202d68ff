package lite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/config"
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
// loop, the store, the gateways and the HTTP API. It adds its parts to the
// App's one list of services (services.go) and starts them in order;
// stopping runs the list in reverse, gracefully: no new connection or turn
// is accepted, running turns get DrainTimeout to end (then those of pause
// agents are marked interrupted and those of continue agents resume at
// the next start), everything is committed, the database is closed.
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
	gws, err := buildGateways(app, log)
	if err != nil {
		ln.Close()
		app.Close()
		return err
	}
	base := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	drain := o.DrainTimeout
	if drain <= 0 {
		drain = drainTimeout
	}
	front := newFrontDoor(app, ln, base, o.Version, stop, drain, log)
	sv := &app.services
	// After the App's own (services.go), in start order: the gateways,
	// then the HTTP API, then ready (the loop runs, serve.json, systemd),
	// then the timers (a firing finds its gateway; nothing fires or
	// starts while the turns drain), then the watchdog.
	sv.add("gateways", &gatewayService{app: app, gws: gws, log: log}, true)
	sv.add("http server", front, true)
	sv.add("ready", &announce{app: app, base: base, ready: o.Ready, log: log}, true)
	sv.add("schedule timer", timer{app.sched}, true)
	sv.add("task timer", timer{app.tasks}, true)
	sv.add("watchdog", &watchdog{loop: app.Loop, log: log}, true)
	defer os.Remove(cfg.DaemonFile())
	// The services outlive ctx, which ends when shutdown begins.
	if err := sv.start(context.WithoutCancel(ctx), true); err != nil {
		log.Info("shutting down", "err", err)
		app.Close()
		return err
	}
	select {
	case <-ctx.Done():
	case err := <-front.served:
		log.Error("http server stopped", "err", err)
	case <-app.Loop.Done():
		// It stopped on its own: the database is damaged. Close returns why.
		log.Error("the event loop stopped")
	}
	log.Info("shutting down")
	err = app.Close()
	log.Info("stopped")
	return err
}

// gatewayService runs the Telegram gateway (when enabled) and the plugin
// gateways, and hands the running ones to the deliver path. Each stops
// within gatewayStopTimeout. Gateways live until the turns they started
// are over: they stop after the HTTP server's drain.
type gatewayService struct {
	app     *App
	gws     gatewaySet
	started gatewaySet
	log     *slog.Logger
}

func (g *gatewayService) Start(ctx context.Context) error {
	started, err := g.gws.start(ctx, g.log)
	if err != nil {
		return err
	}
	g.started = started
	g.app.gateways.set(started)
	return nil
}

func (g *gatewayService) Stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, gatewayStopTimeout)
	defer cancel()
	g.started.stop(ctx, g.log)
	return nil
}

// startGateways starts the gateways as Serve does (the crash tests'
// children); the returned func stops them.
func startGateways(app *App, log *slog.Logger) (func(), error) {
	gws, err := buildGateways(app, log)
	if err != nil {
		return nil, err
	}
	g := &gatewayService{app: app, gws: gws, log: log}
	if err := g.Start(context.Background()); err != nil {
		return nil, err
	}
	return func() { _ = g.Stop(context.Background()) }, nil
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
