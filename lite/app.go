package lite

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/bgproc"
	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/notify"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"github.com/agnx-lite/agnx-lite/lite/upkeep"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
	"github.com/agnx-lite/agnx-lite/runtime/memory"
	"github.com/agnx-lite/agnx-lite/storage"
)

// App is a running agnx-lite: the store, the agents and the loop.
type App struct {
	Config *config.Config
	Store  *storage.Store
	Loop   *runtime.Loop
	Agents *agentcache.Cache
	log    *slog.Logger

	cancel context.CancelFunc
	done   chan error
	// notify and guard run goroutines of their own, stopped by Close.
	notify  *notify.Worker
	guard   *upkeep.Guard
	chats   *chats.Chats
	metrics *metrics
	// plugins is what the gateway plugins last reported, for serve status.
	plugins pluginStates
	// gateways are the gateways serve started, for the deliver path.
	gateways gatewayList
	// turnEnds are told of every turn's end (turnend.go); set in Open.
	turnEnds []func(runtime.TurnEnd)
	// sched is the schedules (sched.go); their timer runs in Serve only.
	sched *schedHost
	// tasks is the task boards (tasks.go); their timer runs in Serve only.
	tasks *taskHost
	// hb keeps the agents' heartbeats (heartbeat.go).
	hb *heartbeats
	// bg runs the agents' background processes (lite/toolset).
	bg *bgproc.Manager
	// memIndex gives the search behind an agent's recall with a query,
	// for its memory tool and SearchMemory (memory_search.go).
	memIndex func(*agents.Agent) memory.Searcher
	// retain ends idle sessions and prunes old events (lite/upkeep); its
	// timer runs in Serve only.
	retain *upkeep.Retention
	// host reads the process's and the machine's facts (metrics, health).
	host *hostfacts.Reader
}

// Chats returns the chat→session map the gateways use.
func (a *App) Chats() *chats.Chats { return a.chats }

// WriteMetrics writes the daemon's metrics in the Prometheus text format.
func (a *App) WriteMetrics(w io.Writer) { a.metrics.write(w, a) }

// SetLastPoll tells the metrics where the Telegram gateway's last
// successful poll time comes from.
func (a *App) SetLastPoll(f func() time.Time) {
	a.metrics.mu.Lock()
	defer a.metrics.mu.Unlock()
	a.metrics.lastPoll = f
}

// Options tune Open; nil means defaults.
type Options struct {
	Logger *slog.Logger
	// NoSync skips fsync (benchmarks only).
	NoSync bool
	// Clock is the schedules' clock (nil: time.Now); tests move it.
	Clock func() time.Time
	// Progress, when set, shows what a person waits for (the first
	// compile of a WASM tool); nil in the daemon, which logs instead.
	Progress *toolset.Progress
	// notifyLoopback lets notifications reach this host (tests' httptest).
	notifyLoopback bool
	// host stands in for the machine's /proc and /sys (tests' fake
	// files); nil reads the machine's.
	host *hostfacts.Reader
	// tools, when set, edits the tool factory's options before it is
	// made (tests' seams: a fake measure, a fake worker).
	tools func(*toolset.Options, *toolset.SupervisorOptions)
	// agents, when set, edits the agent cache's options before it is
	// made (tests' seams: a fake provider, a budget, no recheck delay).
	agents func(*agentcache.Options)
}

// Open opens the data dir and starts the loop. The caller must Close it.
func Open(cfg *config.Config, o *Options) (*App, error) {
	if o == nil {
		o = &Options{}
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir %s cannot be created: %w (choose another with --data-dir)", cfg.DataDir, err)
	}
	st, err := storage.Open(cfg.DBPath(), &storage.Options{NoSync: o.NoSync, Logger: log,
		ReserveBytes: int64(cfg.Runtime.DBReserveMB) << 20})
	if err != nil {
		return nil, err
	}
	sandbox.Reap(cfg.DataDir, log) // what a killed instance left running
	sb := sandbox.New(sandbox.Options{Config: cfg.Sandbox, DataDir: cfg.DataDir, Logger: log, ReserveGone: st.ReserveGone})
	m := newMetrics(cfg.RuntimePrices())
	ctx, cancel := context.WithCancel(context.Background())
	// The App first, so that the loop, the tools and the hosts below can
	// be handed what reports to it; Open fills in its fields before the
	// loop runs. The loop comes before the agent cache, whose tools use
	// the loop's store: it reaches the cache through appAgents. The
	// notification worker comes before the loop, which tells it of its
	// policies' notifications; it reaches the loop, the chats and the
	// gateways through the App.
	a := &App{Config: cfg, Store: st, log: log, cancel: cancel, done: make(chan error, 1), metrics: m, host: o.host}
	if a.host == nil {
		a.host = new(hostfacts.Reader)
	}
	a.notify = notify.New(notify.Options{Logger: log, Env: cfg.Sandbox.Env, Gateways: &cfg.Gateways,
		Agents: appAgents{a}, Chats: notifyChats{a}, Outbox: a, AllowLoopback: o.notifyLoopback})
	_ = a.notify.Start(context.Background()) // it never fails; Close stops it
	loop := runtime.New(runtime.Options{
		TurnEnded:       a.turnEnded,
		Observer:        m,
		Store:           st,
		Agents:          appAgents{a},
		MaxTurns:        cfg.Runtime.MaxConcurrentTurns,
		MaxTools:        cfg.Runtime.MaxConcurrentTools,
		ApprovalTimeout: seconds(cfg.Runtime.ApprovalTimeoutSeconds, 0),
		IdleAfter:       seconds(cfg.Runtime.SessionIdleSeconds, 0),
		HeldBytes:       upkeep.HeldBytes(cfg.Runtime.MemoryLimitMB),
		Usage:           cfg.UsageOptions(),
		Subagents:       cfg.SubagentLimits(),
		Notify:          a.notify.Command,
		// The process's one writer of policy.local.yaml files.
		Policies: new(agents.LocalPolicies),
		Logger:   log,
	})
	a.Loop = loop
	// What the tools use: the schedules and the task boards (their timers
	// run in Serve only), the background processes, the workers.
	a.sched = newSchedHost(a, o.Clock)
	a.tasks = newTaskHost(a, o.Clock)
	a.memIndex = agentcache.MemIndexes(loop, cfg.WorldMemoryDir())
	host := toolHost{a}
	a.bg = toolset.NewBackground(loop, log, host)
	to := toolset.Options{Config: cfg, Logger: log, Sandboxes: sb, Progress: o.Progress, Sessions: toolset.NewSessions(st),
		MemIndex: a.memIndex, MCPCache: loopKV{loop}, Agents: appAgents{a}, Sched: a.sched.svc, Tasks: a.tasks.store, Bg: a.bg}
	so := toolset.SupervisorOptions{Sandboxes: sb, Config: cfg, KV: loop, Host: host, Logger: log}
	if o.tools != nil {
		o.tools(&to, &so)
	}
	to.Workers = toolset.NewSupervisor(so)
	// The cache tells the memory guard and the heartbeats of its builds
	// through cacheHooks: both are made after it, before anything builds.
	ao := agentcache.Options{Config: cfg, Logger: log, Tools: toolset.New(to), Hooks: cacheHooks{a}}
	if o.agents != nil {
		o.agents(&ao)
	}
	cache := agentcache.New(ao)
	a.Agents = cache
	a.chats = chats.New(loop, cache, cfg)
	a.onTurnEnd(a.sched.turnEnded)
	a.onTurnEnd(a.tasks.turnEnded)
	a.hb = newHeartbeats(a, cache, log)
	a.hb.sched, a.hb.loc = a.sched.svc, cfg.Scheduler.Location()
	a.onTurnEnd(a.hb.turnEnded)
	a.retain = upkeep.NewRetention(upkeep.RetentionOptions{Store: st, Loop: loop, Specs: upkeepAgents{cache},
		Sessions: cfg.Sessions, Logger: log})
	a.onTurnEnd(a.notify.TurnEnded)
	if cfg.Runtime.MemoryLimitMB > 0 {
		a.guard = upkeep.NewGuard(upkeep.GuardOptions{LimitMB: cfg.Runtime.MemoryLimitMB, Reserve: agentcache.Reserve,
			Loop: loop, Agents: upkeepAgents{cache}, DB: st, Logger: log})
	}
	go func() { a.done <- loop.Run(ctx) }()
	if a.guard != nil {
		_ = a.guard.Start(ctx) // it never fails
	}
	return a, nil
}

// Close stops the loop (running turns stay marked active and are resumed or
// marked interrupted on the next start), the memory guard and the
// notification worker, waiting for each, then closes the store.
func (a *App) Close() error {
	a.bg.Close()      // first: the processes die with the daemon, and none starts now
	a.sched.close(a)  // before the loop: it reports through it
	a.tasks.close()   // the same
	a.hb.work.close() // its jobs use the loop
	// Retention's sweep uses the loop. Without a deadline Stop never fails.
	_ = a.retain.Stop(context.Background())
	a.cancel()
	err := <-a.done
	if a.guard != nil {
		_ = a.guard.Stop(context.Background()) // without a deadline it never fails
	}
	// After the loop: it is the only caller of notify now. What is still
	// queued gets notify.DrainTimeout; what that leaves, the worker logs.
	ctx, cancel := context.WithTimeout(context.Background(), notify.DrainTimeout)
	_ = a.notify.Stop(ctx)
	cancel()
	a.Agents.Close()
	if cerr := a.Store.Close(); err == nil {
		err = cerr
	}
	return err
}
