package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"syscall"
	"time"
)

var (
	errNotReady = errors.New("the plugin did not say ready in time")
	errNoPong   = errors.New("the plugin did not answer a ping in time")
)

// health tracks one run's handshake and pings. Timers are one-shot and
// re-armed, so that a stopped one never fires late (Go ≥ 1.23).
type health struct {
	ready   *time.Timer
	ping    *time.Ticker // nil until ready
	pong    *time.Timer
	waiting bool // a ping awaits its pong
}

func newHealth(t Timing) *health {
	h := &health{ready: time.NewTimer(t.ReadyTimeout), pong: time.NewTimer(t.PongTimeout)}
	h.pong.Stop()
	return h
}

func (h *health) pingC() <-chan time.Time {
	if h.ping == nil {
		return nil
	}
	return h.ping.C
}

func (h *health) stop() {
	h.ready.Stop()
	h.pong.Stop()
	if h.ping != nil {
		h.ping.Stop()
	}
}

// serve runs one process until it exits or ctx ends: its events, its
// health, and the session watchers' news. After the exit, what the
// plugin wrote last is still read, until its stdout closes (or a second
// passes: a child of the plugin may hold it open).
//
// When ctx ends (Stop) the plugin first gets what its chats are owed:
// the watchers go on until every followed session is delivered and idle,
// for at most the grace (its messages still reach their sessions, and
// their replies wait for the next start); then it is stopped.
func (g *Gateway) serve(ctx context.Context, p *proc) outcome {
	var out outcome
	h := newHealth(g.t)
	defer h.stop()
	typing := time.NewTicker(g.t.TypingInterval)
	defer typing.Stop()
	// Handlers outlive ctx: the acknowledgements while stopping are recorded.
	stop, live := ctx.Done(), context.WithoutCancel(ctx)
	var flush <-chan time.Time
	var hurry <-chan struct{}
	events, exited := p.events, p.exited
	var linger <-chan time.Time
	for events != nil || exited != nil {
		if g.b.stopping && (flush == nil || g.b.flushed()) {
			g.shutdown(live, p, events)
			p.close()
			return outcome{err: ctx.Err()}
		}
		select {
		case <-stop:
			stop, hurry = nil, g.hurry
			g.b.stopping = true
			g.o.Observe(Status{State: StateStopping, PID: p.pid()})
			if !g.b.flushed() {
				t := time.NewTimer(time.Duration(g.grace.Load()))
				defer t.Stop()
				flush = t.C
			}
		case <-flush:
			flush = nil
		case <-hurry:
			flush = nil
		case <-exited:
			exited, linger = nil, time.After(time.Second)
		case <-linger:
			events = nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			g.handle(live, p, ev, h, &out)
		case <-h.ready.C:
			g.kill(p, &out, errNotReady, "plugin gateway did not say ready in time; killing it", g.t.ReadyTimeout)
		case <-h.pingC():
			if !h.waiting {
				h.waiting = true
				h.pong.Reset(g.t.PongTimeout)
				g.b.command(Ping{RequestID: g.b.nextID()})
			}
		case <-h.pong.C:
			g.kill(p, &out, errNoPong, "plugin gateway did not answer a ping; killing it", g.t.PongTimeout)
		case w := <-g.b.events:
			g.b.onWatch(live, w)
		case m := <-g.b.outbound:
			g.b.onOutbound(m)
		case f := <-g.b.follows:
			g.b.onFollow(live, f)
		case items := <-g.b.queued:
			g.b.onQueued(live, items)
		case <-typing.C:
			g.b.typing()
		}
	}
	p.close()
	if p.err != nil {
		out.failed = true
	}
	if out.err == nil {
		out.err = p.err
	}
	return out
}

// kill ends a plugin that failed a health check.
func (g *Gateway) kill(p *proc, out *outcome, why error, msg string, timeout time.Duration) {
	g.log.Warn(msg, "plugin", g.o.Name, "timeout", timeout.String())
	out.failed, out.err = true, why
	p.signal(syscall.SIGKILL)
}

func (g *Gateway) handle(ctx context.Context, p *proc, ev Event, h *health, out *outcome) {
	switch e := ev.(type) {
	case Ready:
		g.onReady(ctx, p, e, h, out)
	case MessageReceived:
		g.b.onMessage(ctx, e)
	case CallbackQuery:
		g.b.onCallback(ctx, e)
	case CommandOK:
		g.b.done(ctx, e.RequestID, nil)
	case CommandError:
		g.b.done(ctx, e.RequestID, &e)
	case Pong:
		h.waiting = false
		h.pong.Stop()
		if !e.Connected {
			g.b.limit.log(g.log, slog.LevelDebug, "plugin gateway says it is not connected to its platform", "plugin", g.o.Name)
		}
	case Error:
		g.b.limit.log(g.log, slog.LevelWarn, "plugin gateway reports an error", "plugin", g.o.Name, "code", e.Code, "message", e.Message, "fatal", e.Fatal)
		if e.Fatal {
			out.failed, out.err = true, fmt.Errorf("the plugin reported a fatal error: %s: %s", e.Code, e.Message)
		}
	case ShuttingDown:
		g.log.Info("plugin gateway is shutting down", "plugin", g.o.Name, "reason", e.Reason)
	case AuthRequired:
		g.onAuth(p, e)
	case AuthSuccess:
		g.log.Info("plugin gateway is paired with its platform", "plugin", g.o.Name)
		g.o.Observe(Status{State: StateAuthenticated, PID: p.pid()})
	}
}

// onAuth logs what the user must do to pair the plugin (the QR code as
// text, or the pairing code) and tells Observe, for serve status.
func (g *Gateway) onAuth(p *proc, a AuthRequired) {
	m := a.Method
	args := []any{"plugin", g.o.Name, "method", m.Method, "expires_in_seconds", m.ExpiresIn}
	if m.Method == AuthPairCode {
		args = append(args, "code", m.Code)
	}
	g.log.Warn("plugin gateway needs pairing with its platform: scan the QR code or enter the code it shows", args...)
	if m.QRASCII != "" {
		g.log.Info("plugin gateway pairing QR code\n"+m.QRASCII, "plugin", g.o.Name)
	}
	g.o.Observe(Status{State: StateAuthRequired, PID: p.pid(), Auth: &m})
}

func (g *Gateway) onReady(ctx context.Context, p *proc, r Ready, h *health, out *outcome) {
	if err := CheckVersion(r.Version); err != nil {
		g.log.Warn(err.Error(), "plugin", g.o.Name, "command", g.o.Command)
	}
	h.ready.Stop()
	if h.ping == nil {
		h.ping = time.NewTicker(g.t.PingInterval)
	}
	out.ready = true
	g.log.Info("plugin gateway ready", "plugin", g.o.Name, "gateway", r.Gateway, "version", r.Version, "capabilities", r.Capabilities)
	g.o.Observe(Status{State: StateReady, PID: p.pid()})
	g.b.onReady(ctx, r.Capabilities)
}

// shutdown stops the plugin at Stop, once flushed: the watchers stop
// (what the chats are still owed stays in the log), the plugin gets
// shutdown, then SIGTERM,
// then SIGKILL, each after the grace, or SIGKILL at once when Stop's
// deadline passes. Meanwhile its acknowledgements are still recorded, so
// a reply it had is not sent again at the next start; other events are
// ignored. It returns once the process has exited and its last lines
// are read.
func (g *Gateway) shutdown(ctx context.Context, p *proc, events <-chan Event) {
	g.b.stopping = true
	g.b.pause()
	p.send(Shutdown{})
	grace := time.Duration(g.grace.Load())
	t := time.NewTimer(grace)
	defer t.Stop()
	signals := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}
	exited, hurry := p.exited, g.hurry
	var linger <-chan time.Time
	for events != nil || exited != nil {
		select {
		case <-exited:
			exited, linger = nil, time.After(time.Second)
		case <-linger:
			events = nil
		case <-hurry:
			hurry = nil
			if exited != nil {
				p.signal(syscall.SIGKILL)
			}
		case <-t.C:
			if len(signals) > 0 && exited != nil {
				g.log.Warn("plugin did not exit in time; signalling it", "plugin", g.o.Name, "signal", signals[0].String())
				p.signal(signals[0])
				signals = signals[1:]
				t.Reset(grace)
			}
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			switch e := ev.(type) {
			case CommandOK:
				g.b.done(ctx, e.RequestID, nil)
			case CommandError:
				g.b.done(ctx, e.RequestID, &e)
			}
		}
	}
}
