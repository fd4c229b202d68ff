package lite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/lite/systemd"
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

// Daemon is what `serve` writes to <data_dir>/serve.json so the CLI can
// find the running daemon.
type Daemon struct {
	PID     int       `json:"pid"`
	URL     string    `json:"url"`
	Started time.Time `json:"started"`
}

// DaemonFile is where a running daemon describes itself.
func (c *Config) DaemonFile() string { return filepath.Join(c.DataDir, "serve.json") }

// ReadDaemon reads serve.json; it returns nil when no daemon is running
// (no file, or its process is gone).
func ReadDaemon(cfg *Config) *Daemon {
	data, err := os.ReadFile(cfg.DaemonFile())
	if err != nil {
		return nil
	}
	var d Daemon
	if json.Unmarshal(data, &d) != nil || d.PID <= 0 || d.URL == "" {
		return nil
	}
	if err := syscall.Kill(d.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return nil
	}
	return &d
}

// Serve runs the daemon until ctx ends or an admin asks it to stop: the
// loop, the store and the HTTP API. Stopping is graceful: no new
// connection or turn is accepted, running turns get drainTimeout to end
// (then those of pause agents are marked interrupted and those of continue
// agents resume at the next start), everything is committed, the database
// is closed.
func Serve(ctx context.Context, cfg *Config, o *ServeOptions) error {
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
	if n := cfg.Server.MaxConnections; n > 0 {
		ln = limitListener(ln, n)
	}
	// Gateways live until the turns they started are over, so they are
	// not tied to ctx, which ends when shutdown begins.
	stopGateways, err := startGateways(app, log)
	if err != nil {
		ln.Close()
		app.Close()
		return err
	}
	base := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	api := httpapi.New(httpapi.Options{
		Loop: app.Loop, Store: app.Store, Agents: registry{app.Agents}, Version: o.Version,
		APIToken: cfg.Server.APIToken.Value(), AdminToken: cfg.Server.AdminToken.Value(),
		KeepAlive:      seconds(cfg.Server.KeepAliveIntervalSeconds, -1),
		RequestTimeout: seconds(cfg.Server.RequestTimeoutSeconds, 0),
		Shutdown:       stop, BaseURL: base, Logger: log, Metrics: app.WriteMetrics,
	})
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       seconds(cfg.Server.IdleTimeoutSeconds, 0),
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if err := writeDaemon(cfg, base); err != nil {
		log.Warn("cannot write serve.json; the CLI will find the daemon from the config", "err", err)
	}
	defer os.Remove(cfg.DaemonFile())
	log.Info("ready", "url", base, "pid", os.Getpid(), "data_dir", cfg.DataDir, "agents_dir", cfg.AgentsDir)
	if o.Ready != nil {
		o.Ready(base)
	}
	notifySystemd(ctx, app, base, log)
	select {
	case <-ctx.Done():
	case err := <-served:
		log.Error("http server stopped", "err", err)
	}
	log.Info("shutting down")
	_ = systemd.Notify("STOPPING=1\nSTATUS=draining running turns")
	drain := o.DrainTimeout
	if drain <= 0 {
		drain = drainTimeout
	}
	return shutdown(app, api, srv, log, drain, stopGateways)
}

// notifySystemd tells systemd the daemon is ready (Type=notify) and, with
// WatchdogSec set, pings its watchdog from the event loop: a loop that is
// stuck stops answering Ping, the pings stop, and systemd restarts it.
func notifySystemd(ctx context.Context, app *App, base string, log *slog.Logger) {
	_ = systemd.Notify("READY=1\nSTATUS=serving on " + base)
	if iv, ok := systemd.WatchdogInterval(); ok {
		go systemd.RunWatchdog(ctx, iv, func(ctx context.Context) error {
			err := app.Loop.Ping(ctx)
			if err != nil {
				log.Warn("the event loop did not answer the watchdog", "err", err)
			}
			return err
		})
	}
}

// startGateways starts the Telegram gateway (when enabled) and the plugin
// gateways; the returned func stops them all. The Telegram gateway's last
// successful poll goes to the metrics.
func startGateways(app *App, log *slog.Logger) (func(), error) {
	tg, err := StartTelegram(context.Background(), app, log)
	if err != nil {
		return nil, err
	}
	if tg != nil {
		app.SetLastPoll(tg.LastPoll)
	}
	stopPlugins, err := StartPlugins(context.Background(), app, log)
	if err != nil {
		tg.Stop()
		return nil, err
	}
	return func() {
		tg.Stop()
		stopPlugins()
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

// checkBind refuses to serve a non-loopback address without an API token.
func checkBind(cfg *Config) error {
	host := cfg.Server.Host
	ip := net.ParseIP(host)
	loop := host == "localhost" || (ip != nil && ip.IsLoopback())
	if !loop && cfg.Server.APIToken.Value() == "" {
		return configError{fmt.Errorf("refusing to serve on %s without a token: set server.api_token (e.g. api_token: ${AGNX_API_TOKEN}) or bind 127.0.0.1", host)}
	}
	return nil
}

func writeDaemon(cfg *Config, url string) error {
	data, _ := json.Marshal(Daemon{PID: os.Getpid(), URL: url, Started: time.Now().UTC()})
	tmp := cfg.DaemonFile() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, cfg.DaemonFile())
}

// seconds turns a config value into a duration; 0 means def.
func seconds(n int, def time.Duration) time.Duration {
	if n == 0 {
		return def
	}
	return time.Duration(n) * time.Second
}

// limitListener caps open connections. A connection past the cap is
// answered 503 at once and closed, so a full server still says why
// instead of hanging its clients.
func limitListener(l net.Listener, n int) net.Listener {
	return &limited{Listener: l, sem: make(chan struct{}, n)}
}

type limited struct {
	net.Listener
	sem chan struct{}
}

func (l *limited) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.sem <- struct{}{}:
			lc := &limitedConn{Conn: c}
			lc.release = func() { <-l.sem }
			return lc, nil
		default:
			refuse(c)
		}
	}
}

// tooMany is the whole answer to a connection past server.max_connections.
const tooMany = `{"type":"urn:agnx:problem:service_unavailable","title":"Service unavailable","status":503,` +
	`"detail":"too many open connections (server.max_connections): try again shortly"}`

func refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\n"+
		"Content-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s", len(tooMany), tooMany)
	c.Close()
}

type limitedConn struct {
	net.Conn
	release func()
	once    sync.Once
}

// Close may be called more than once, from more than one goroutine (the
// server's and Shutdown's); the slot is released once.
func (c *limitedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
