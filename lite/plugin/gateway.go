package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Restart policies.
const (
	RestartAlways    = "always"
	RestartOnFailure = "on_failure"
	RestartNever     = "never"
)

// Options configure one plugin.
type Options struct {
	// Name is the gateway's name in routes and sessions (gateways.external
	// name); Command, Args and Env start it. Env holds "KEY=value" pairs
	// added to the daemon's environment; they are never logged.
	Name    string
	Command string
	Args    []string
	Env     []string
	// Restart is always, on_failure (the default: restart unless the
	// plugin exited with status 0) or never.
	Restart  string
	Sessions Sessions
	Runtime  Runtime
	Logger   *slog.Logger
	Timing   Timing
	// Observe, when set, is told of every change of the plugin's state,
	// from the Gateway's goroutine; it must not block (a test seam).
	Observe func(Status)
}

// Timing holds the supervisor's durations; zero means the default.
type Timing struct {
	ReadyTimeout   time.Duration // 10 s: from start to ready
	PingInterval   time.Duration // 30 s
	PongTimeout    time.Duration // 10 s: from a ping to its pong
	StopGrace      time.Duration // 5 s: shutdown → SIGTERM → SIGKILL
	WriteTimeout   time.Duration // 10 s: one line to the plugin's stdin
	BackoffBase    time.Duration // 1 s: the first restart delay, doubled each time
	BackoffMax     time.Duration // 60 s
	StableAfter    time.Duration // 60 s: a run this long resets the backoff
	TypingInterval time.Duration // 4 s: send_typing while a turn runs
	CallTimeout    time.Duration // 30 s: one call into the runtime
	AckTimeout     time.Duration // 60 s: from a reply to its command_ok (longer than a ping and its pong)
}

func (t Timing) withDefaults() Timing {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.ReadyTimeout, 10*time.Second)
	def(&t.PingInterval, 30*time.Second)
	def(&t.PongTimeout, 10*time.Second)
	def(&t.StopGrace, 5*time.Second)
	def(&t.WriteTimeout, 10*time.Second)
	def(&t.BackoffBase, time.Second)
	def(&t.BackoffMax, 60*time.Second)
	def(&t.StableAfter, 60*time.Second)
	def(&t.TypingInterval, 4*time.Second)
	def(&t.CallTimeout, 30*time.Second)
	def(&t.AckTimeout, 60*time.Second)
	return t
}

// State is a step of a plugin's life.
type State string

// The states Observe is told of.
const (
	StateStarted  State = "started"  // a process runs (Run, PID)
	StateReady    State = "ready"    // it said ready
	StateExited   State = "exited"   // it ended (Err: why)
	StateBackoff  State = "backoff"  // it restarts after Wait
	StateStopping State = "stopping" // Stop began: the chats get what they are owed, then the plugin stops
	StateStopped  State = "stopped"  // it is not restarted; Done is closed next
	StateDropped  State = "dropped"  // a command was dropped: the plugin does not read
	// StateAuthRequired: the plugin waits to be paired with its platform
	// (Auth says how); StateAuthenticated: the pairing worked.
	StateAuthRequired  State = "auth_required"
	StateAuthenticated State = "authenticated"
)

// Status is one state change of a plugin.
type Status struct {
	State State
	Run   int // which start, from 1 (0 for ready and dropped)
	PID   int
	Err   error
	Wait  time.Duration
	Auth  *AuthMethod // for StateAuthRequired
}

// Gateway supervises one plugin and bridges its chats to the runtime.
type Gateway struct {
	o         Options
	t         Timing
	log       *slog.Logger
	b         *bridge
	started   atomic.Bool
	hurryOnce sync.Once
	grace     atomic.Int64  // Stop's grace between shutdown, SIGTERM and SIGKILL
	hurry     chan struct{} // closed when Stop's ctx ends: SIGKILL at once
	cancel    context.CancelFunc
	done      chan struct{}
}

// New checks the options and returns the Gateway, not started.
func New(o Options) (*Gateway, error) {
	switch {
	case o.Name == "" || o.Command == "":
		return nil, errors.New("a gateway plugin needs a name and a command")
	case o.Sessions == nil || o.Runtime == nil:
		return nil, errors.New("a gateway plugin needs Sessions and Runtime")
	}
	switch o.Restart {
	case "":
		o.Restart = RestartOnFailure
	case RestartAlways, RestartOnFailure, RestartNever:
	default:
		return nil, fmt.Errorf("restart %q is not one of always, on_failure, never", o.Restart)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Observe == nil {
		o.Observe = func(Status) {}
	}
	g := &Gateway{o: o, t: o.Timing.withDefaults(), log: o.Logger, hurry: make(chan struct{}), done: make(chan struct{})}
	g.b = newBridge(o, g.t)
	g.b.quit = g.done
	g.b.queue = g.b.newQueue()
	g.grace.Store(int64(g.t.StopGrace))
	return g, nil
}

// Start is New, then Gateway.Start.
func Start(ctx context.Context, o Options) (*Gateway, error) {
	g, err := New(o)
	if err != nil {
		return nil, err
	}
	return g, g.Start(ctx)
}

// Name is the gateway's name in routes and sessions.
func (g *Gateway) Name() string { return g.o.Name }

// Start starts the plugin and returns at once; the process is started,
// restarted and stopped by the Gateway's own goroutine, which runs until
// Stop (ctx's cancellation does not end it).
func (g *Gateway) Start(ctx context.Context) error {
	if !g.started.CompareAndSwap(false, true) {
		return fmt.Errorf("the plugin gateway %s is already started", g.o.Name)
	}
	ctx, g.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go g.run(ctx)
	return nil
}

// Stop stops the plugin and returns when every goroutine of the Gateway
// has ended. A plugin that is up first gets the replies its chats are
// owed (until every followed session is delivered and idle, for at most
// the grace); then it gets shutdown, then SIGTERM, then SIGKILL, each
// after the grace, and its acknowledgements are still recorded
// meanwhile. The grace is Timing.StopGrace, or less so that all of it
// fits before ctx's deadline. When ctx ends first the plugin is killed
// at once, and Stop returns ctx's error. What is left is delivered at
// the next start.
func (g *Gateway) Stop(ctx context.Context) error {
	if !g.started.Load() {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok {
		// Flush, shutdown → SIGTERM, SIGTERM → SIGKILL, and room to spare.
		g.grace.Store(int64(max(0, min(g.t.StopGrace, time.Until(dl)/4))))
	}
	g.cancel()
	select {
	case <-g.done:
		return nil
	case <-ctx.Done():
	}
	g.hurryOnce.Do(func() { close(g.hurry) })
	<-g.done
	return ctx.Err()
}

// Done is closed when the Gateway has stopped: after Stop, or when the
// plugin ended and its restart policy does not restart it.
func (g *Gateway) Done() <-chan struct{} { return g.done }

// outcome is how one run of the plugin ended.
type outcome struct {
	err    error
	failed bool // a non-zero exit, a failed start, or killed for its health
	ready  bool
}

func (g *Gateway) run(ctx context.Context) {
	defer close(g.done)
	defer g.b.stopQueue(context.WithoutCancel(ctx))
	defer g.b.abandon(errStopped)
	defer g.b.closeWatches()
	g.b.recover(ctx)
	bo := backoff{base: g.t.BackoffBase, max: g.t.BackoffMax}
	for n := 1; ; n++ {
		started := time.Now()
		out := g.runOnce(ctx, n)
		if ctx.Err() != nil {
			return
		}
		if !g.restarts(out) {
			g.log.Warn("plugin gateway stopped; it is not restarted", "plugin", g.o.Name, "restart", g.o.Restart, "err", out.err)
			g.o.Observe(Status{State: StateStopped, Run: n, Err: out.err})
			return
		}
		if out.ready && time.Since(started) >= g.t.StableAfter {
			bo.reset()
		}
		wait := bo.next()
		g.log.Warn("plugin gateway ended; restarting it", "plugin", g.o.Name, "err", out.err, "in", wait.String())
		g.o.Observe(Status{State: StateBackoff, Run: n, Err: out.err, Wait: wait})
		if !g.sleep(ctx, wait) {
			return
		}
	}
}

func (g *Gateway) restarts(out outcome) bool {
	switch {
	case g.o.Restart == RestartNever:
		return false
	case g.o.Restart == RestartAlways:
		return true
	}
	return out.failed
}

// sleep waits d while serving the session watchers; false means ctx ended.
func (g *Gateway) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case w := <-g.b.events:
			g.b.onWatch(ctx, w)
		case m := <-g.b.outbound:
			g.b.onOutbound(m)
		}
	}
}

func (g *Gateway) runOnce(ctx context.Context, n int) outcome {
	p, err := startProc(procConfig{
		name: g.o.Name, command: g.o.Command, args: g.o.Args, env: g.o.Env,
		writeTimeout: g.t.WriteTimeout, log: g.log, garbage: g.b.limit,
	})
	if err != nil {
		g.log.Error("plugin gateway cannot start", "plugin", g.o.Name, "command", g.o.Command, "err", err)
		return outcome{err: err, failed: true}
	}
	g.log.Info("plugin gateway started", "plugin", g.o.Name, "pid", p.pid(), "run", n)
	g.o.Observe(Status{State: StateStarted, Run: n, PID: p.pid()})
	g.b.attach(p)
	defer g.b.detach()
	out := g.serve(ctx, p)
	if ctx.Err() == nil {
		g.o.Observe(Status{State: StateExited, Run: n, PID: p.pid(), Err: out.err})
	}
	return out
}

// backoff is exponential with equal jitter: the n-th wait is drawn from
// [d/2, d] with d = base·2ⁿ, capped at max.
type backoff struct {
	base, max time.Duration
	n         int
}

func (b *backoff) next() time.Duration {
	d := b.max
	if b.n < 30 && b.base<<b.n < b.max {
		d = b.base << b.n
		b.n++
	}
	return d/2 + rand.N(d/2+1)
}

func (b *backoff) reset() { b.n = 0 }
