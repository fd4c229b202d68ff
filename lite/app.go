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
	"github.com/agnx-lite/agnx-lite/lite/autonomy"
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

	// services is what runs in the background, in start order
	// (services.go): Close stops it in reverse.
	services services
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
	// sched is the schedules (lite/autonomy); their timer runs in Serve
	// only.
	sched *autonomy.Schedules
	// tasks is the task boards (lite/autonomy); their timer runs in Serve
	// only.
	tasks *autonomy.Tasks
	// hb keeps the agents' heartbeats (lite/autonomy).
	hb *autonomy.Heartbeats
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
	// autonomy, when set, edits the schedules' and the task boards'
	// options before they are made (tests' seams: the crash tests' holds).
	autonomy func(*autonomy.SchedulesOptions, *autonomy.TasksOptions)
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
	// The App first, so that the loop, the tools and the hosts below can
	// be handed what reports to it; Open fills in its fields before the
	// loop runs. The loop comes before the agent cache, whose tools use
	// the loop's store: it reaches the cache through appAgents. The
	// notification worker comes before the loop, which tells it of its
	// policies' notifications; it reaches the loop, the chats and the
	// gateways through the App.
	a := &App{Config: cfg, Store: st, log: log, metrics: m, host: o.host}
	if a.host == nil {
		a.host = new(hostfacts.Reader)
	}
	a.notify = notify.New(notify.Options{Logger: log, Env: cfg.Sandbox.Env, Gateways: &cfg.Gateways,
		Agents: appAgents{a}, Chats: notifyChats{a}, Outbox: a, AllowLoopback: o.notifyLoopback})
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
	// run in Serve only), the background processes, the workers. The
	// heartbeats come first: the schedules fire them and are their
	// scheduler. They reach the cache, the chats and the gateways, all
	// made later, through the App.
	host := autonomyHost{a}
	a.hb = autonomy.NewHeartbeats(autonomy.HeartbeatOptions{AgentsDir: cfg.AgentsDir, Loop: loop, Agents: hbAgents{a},
		Location: cfg.Scheduler.Location(), Logger: log, Notifier: a.notify, Chats: host, Gateways: host})
	schedOpts := autonomy.SchedulesOptions{Loop: loop, Location: cfg.Scheduler.Location(),
		MaxTurnsPerHour: cfg.Scheduler.MaxTurnsPerHour, Now: o.Clock, Logger: log, Chats: host, Gateways: host, Heartbeats: a.hb}
	taskOpts := autonomy.TasksOptions{Loop: loop, Config: cfg.Tasks, Dir: cfg.TasksDir(), Now: o.Clock, Logger: log}
	if o.autonomy != nil {
		o.autonomy(&schedOpts, &taskOpts)
	}
	a.sched = autonomy.NewSchedules(schedOpts)
	a.tasks = autonomy.NewTasks(taskOpts)
	a.memIndex = agentcache.MemIndexes(loop, cfg.WorldMemoryDir())
	th := toolHost{a}
	a.bg = toolset.NewBackground(loop, log, th)
	to := toolset.Options{Config: cfg, Logger: log, Sandboxes: sb, Progress: o.Progress, Sessions: toolset.NewSessions(st),
		MemIndex: a.memIndex, MCPCache: loopKV{loop}, Agents: appAgents{a}, Sched: a.sched.Service(), Tasks: a.tasks.Store(), Bg: a.bg}
	so := toolset.SupervisorOptions{Sandboxes: sb, Config: cfg, KV: loop, Host: th, Logger: log}
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
	a.onTurnEnd(a.sched.TurnEnded)
	a.onTurnEnd(a.tasks.TurnEnded)
	a.onTurnEnd(a.hb.TurnEnded)
	a.retain = upkeep.NewRetention(upkeep.RetentionOptions{Store: st, Loop: loop, Specs: upkeepAgents{cache},
		Sessions: cfg.Sessions, Logger: log})
	a.onTurnEnd(a.notify.TurnEnded)
	if cfg.Runtime.MemoryLimitMB > 0 {
		a.guard = upkeep.NewGuard(upkeep.GuardOptions{LimitMB: cfg.Runtime.MemoryLimitMB, Reserve: agentcache.Reserve,
			Loop: loop, Agents: upkeepAgents{cache}, DB: st, Logger: log})
	}
	// The one list of what runs in the background, in start order; Close
	// stops it in reverse, so each part's stop finds what it reports to
	// still running. Open starts the first ones; Serve adds its own and
	// starts the ones marked serve.
	sv := &a.services
	// The loop is the notification worker's last caller; what is still
	// queued when it stops gets notify.DrainTimeout, then it is logged.
	sv.add("notifications", bounded{a.notify, notify.DrainTimeout}, false)
	sv.add("event loop", &loopService{loop: loop}, false)
	if a.guard != nil {
		sv.add("memory guard", a.guard, false)
	}
	// These report through the loop: they stop before it.
	// (Serve adds their timers after the gateways.)
	sv.add("schedules", stopOnly{a.sched}, false)
	sv.add("task boards", stopOnly{a.tasks}, false)
	// Serve starts it: its sync registers the heartbeats as schedules,
	// which fire once the schedule timer runs; its jobs use the loop.
	sv.add("heartbeats", a.hb, true)
	// Serve starts it; its first sweep is a minute later.
	sv.add("retention", a.retain, true)
	// Stopped first of the App's own: the processes die with the daemon,
	// and none starts after.
	sv.add("background processes", closer(a.bg.Close), false)
	if err := sv.start(context.Background(), false); err != nil {
		_ = sv.stop()
		a.Agents.Close()
		_ = st.Close()
		return nil, err
	}
	return a, nil
}

// Close stops everything the App runs in the reverse of its start order
// (Open's list, services.go): the background processes, the timers and
// workers that report through the loop, the loop (running turns stay
// marked active and are resumed or marked interrupted on the next
// start), the memory guard, the notification worker; then it closes the
// agents and the store. It returns why the loop stopped when it stopped
// on its own.
func (a *App) Close() error {
	err := a.services.stop()
	a.Agents.Close()
	if cerr := a.Store.Close(); err == nil {
		err = cerr
	}
	return err
}
