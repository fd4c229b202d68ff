package lite

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/notify"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
)

// Heartbeats are schedules lite keeps itself: one per agent with a
// heartbeat (HEARTBEAT.md or spec.heartbeat), id "hb_<agent>", put when
// the agent gains one or changes it and cancelled when it loses it or is
// removed. Finding them must not slow start-up: sync runs after the daemon
// is ready, off the loop, and reads little (one stat of HEARTBEAT.md per
// agent folder, agent.yaml searched for the word "heartbeat", and only the
// agents whose agent.yaml has it parsed). It runs again when the agents are reloaded and
// when the cache rebuilds an agent whose heartbeat changed.

// hbIDPrefix begins every heartbeat's schedule id.
const hbIDPrefix = "hb_"

// hbScheduler is what heartbeats need of the scheduler (*sched.Service).
type hbScheduler interface {
	Put(ctx context.Context, sc sched.Schedule) (sched.Schedule, error)
	Cancel(ctx context.Context, id, agent string) (sched.Schedule, error)
	List(ctx context.Context, agent string, all bool) ([]sched.Schedule, error)
}

// heartbeats registers the agents' heartbeats, runs their turns and
// delivers what they say (heartbeat_turn.go). Its work (syncs, deliveries)
// runs on one goroutine that exists only while there is work.
type heartbeats struct {
	agentsDir string
	loop      *runtime.Loop
	agents    *agentcache.Cache
	log       *slog.Logger
	// sched is nil until the scheduler is wired in: sync does nothing.
	sched hbScheduler
	// deliver sends what a heartbeat said where it should go.
	deliver func(ctx context.Context, n hbNotice) error
	// isGateway tells a chat gateway (telegram, a plugin) from the
	// sessions of no chat (http, cli).
	isGateway func(name string) bool
	loc       *time.Location
	now       func() time.Time
	// maxTurns is when a heartbeat session is rotated (hbMaxTurns).
	maxTurns int

	work hbWorker

	mu sync.Mutex
	// registered is what the last sync put, by agent: a rebuild of an
	// agent whose heartbeat differs triggers a sync.
	registered map[string]hbTiming
	// syncAll and syncNames are the syncs asked for and not yet begun.
	syncAll   bool
	syncNames map[string]bool
	// lastChat is the chat each agent last answered through a gateway.
	lastChat map[string]chatRef
}

// hbTiming is what a heartbeat's schedule depends on.
type hbTiming struct {
	every       time.Duration
	activeHours string
}

type chatRef struct{ gateway, chatID string }

func newHeartbeats(a *App, cache *agentcache.Cache, log *slog.Logger) *heartbeats {
	h := &heartbeats{agentsDir: a.Config.AgentsDir, loop: a.Loop, agents: cache, log: log,
		loc: time.Local, now: time.Now, maxTurns: hbMaxTurns, registered: map[string]hbTiming{}, lastChat: map[string]chatRef{},
		isGateway: func(name string) bool { _, ok := a.Gateway(name); return ok }}
	h.deliver = func(ctx context.Context, n hbNotice) error {
		if n.Direct {
			return h.deliverChat(ctx, n, a.Chats(), a.Follow)
		}
		return h.notify(a, n)
	}
	h.work.log = log
	return h
}

func timingOf(hb *agents.Heartbeat) hbTiming {
	if hb == nil {
		return hbTiming{}
	}
	return hbTiming{every: hb.Every, activeHours: hb.ActiveHours}
}

// start finds the heartbeats once the daemon is ready (Serve calls it).
func (h *heartbeats) start() { h.trigger("") }

// trigger asks for a sync of one agent, or of all when name is "". It
// never blocks: the agent cache calls it with its mutex held.
func (h *heartbeats) trigger(name string) {
	h.mu.Lock()
	if name == "" {
		h.syncAll = true
	} else {
		if h.syncNames == nil {
			h.syncNames = map[string]bool{}
		}
		h.syncNames[name] = true
	}
	h.mu.Unlock()
	h.work.post(hbSyncJob, func(ctx context.Context) { h.runSync(ctx) })
}

// built is told of every agent the cache builds: one whose heartbeat is
// not what the last sync registered is synced again.
func (h *heartbeats) built(la *runtime.LoadedAgent) {
	h.mu.Lock()
	reg, known := h.registered[la.Spec.Name]
	h.mu.Unlock()
	if t := timingOf(la.Spec.Heartbeat); t != reg || !known && la.Spec.Heartbeat != nil {
		h.trigger(la.Spec.Name)
	}
}

// runSync does the syncs asked for so far.
func (h *heartbeats) runSync(ctx context.Context) {
	h.mu.Lock()
	all, names := h.syncAll, h.syncNames
	h.syncAll, h.syncNames = false, nil
	h.mu.Unlock()
	if h.sched == nil || !all && len(names) == 0 {
		return
	}
	if err := h.sync(ctx, all, names); err != nil {
		h.log.Warn("heartbeats could not be registered; they are tried again at the next reload", "err", err)
	}
}

// sync puts the heartbeat schedules that are wanted and cancels those no
// longer wanted: of every agent when all is set, else of names.
func (h *heartbeats) sync(ctx context.Context, all bool, names map[string]bool) error {
	start := time.Now()
	have, err := h.sched.List(ctx, "", false)
	if err != nil {
		return err
	}
	current := map[string]sched.Schedule{}
	for _, sc := range have {
		if strings.HasPrefix(sc.ID, hbIDPrefix) {
			current[sc.Agent] = sc
		}
	}
	want, keep, err := h.wanted(all, names)
	if err != nil {
		return err
	}
	var put, cancelled int
	for name, hb := range want {
		sc := hbSchedule(name, hb)
		if old, ok := current[name]; ok && sameHeartbeat(old, sc) {
			continue
		}
		if _, err := h.sched.Put(ctx, sc); err != nil {
			h.log.Warn("heartbeat not registered", "agent", name, "err", err)
			continue
		}
		put++
	}
	for name, sc := range current {
		if _, ok := want[name]; ok || keep[name] || !all && !names[name] {
			continue
		}
		if _, err := h.sched.Cancel(ctx, sc.ID, name); err != nil && !errors.Is(err, sched.ErrNotFound) {
			h.log.Warn("heartbeat not cancelled", "agent", name, "err", err)
			continue
		}
		cancelled++
	}
	h.mu.Lock()
	if all {
		clear(h.registered)
	}
	for name := range names {
		delete(h.registered, name)
	}
	for name, hb := range want {
		h.registered[name] = timingOf(hb)
	}
	h.mu.Unlock()
	h.log.Debug("heartbeats synced", "heartbeats", len(want), "put", put, "cancelled", cancelled,
		"took", time.Since(start))
	return nil
}

// wanted finds the agents that have a heartbeat: of all agents, or of
// names. keep are the agents that did not load (an edit being made): their
// schedule stays as it is.
func (h *heartbeats) wanted(all bool, names map[string]bool) (want map[string]*agents.Heartbeat, keep map[string]bool, err error) {
	want, keep = map[string]*agents.Heartbeat{}, map[string]bool{}
	var dirs []agents.Entry
	if all {
		if dirs, err = agents.List(h.agentsDir); err != nil {
			return nil, nil, err
		}
	} else {
		for name := range names {
			if agents.ValidName(name) {
				dirs = append(dirs, agents.Entry{Name: name, Dir: filepath.Join(h.agentsDir, name)})
			}
		}
	}
	for _, e := range dirs {
		file, mentions := heartbeatHints(e.Dir)
		if !mentions {
			// HEARTBEAT.md alone: the defaults, without parsing anything
			// (an agent that does not load fails at its heartbeat, logged).
			if file {
				want[e.Name] = &agents.Heartbeat{Every: agents.DefaultHeartbeatEvery}
			}
			continue
		}
		spec, err := h.agents.ReadSpec(e.Name)
		switch {
		case errors.Is(err, runtime.ErrAgentNotFound):
		case err != nil:
			keep[e.Name] = true
			h.log.Warn("agent does not load; its heartbeat stays as it was", "agent", e.Name, "err", err)
		case spec.Heartbeat != nil:
			want[e.Name] = spec.Heartbeat
		}
	}
	return want, keep, nil
}

// heartbeatHints is the cheap look before an agent is loaded: whether its
// folder has HEARTBEAT.md, and whether its agent.yaml mentions heartbeat
// (only such an agent.yaml can change the heartbeat's defaults).
func heartbeatHints(dir string) (file, mentions bool) {
	_, err := os.Lstat(filepath.Join(dir, agents.HeartbeatFile))
	file = err == nil
	f, err := os.OpenFile(filepath.Join(dir, agents.FileName), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return file, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return file, false
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	return file, err == nil && bytes.Contains(data, []byte("heartbeat"))
}

// hbSchedule is the schedule of an agent's heartbeat. Runs missed while
// the daemon was down are skipped: a heartbeat is about now.
func hbSchedule(name string, hb *agents.Heartbeat) sched.Schedule {
	return sched.Schedule{
		ID:          hbIDPrefix + name,
		Agent:       name,
		Destination: sched.Destination{Gateway: agents.HeartbeatGateway, ChatID: name},
		Timing:      sched.Timing{EverySeconds: int64(hb.Every / time.Second)},
		Payload:     sched.Payload{Kind: sched.KindHeartbeat},
		Missed:      sched.MissedSkip,
		ActiveHours: hb.ActiveHours,
	}
}

// sameHeartbeat reports whether the active schedule old already is sc.
func sameHeartbeat(old, sc sched.Schedule) bool {
	return old.Status == sched.Active && old.Timing.EverySeconds == sc.Timing.EverySeconds &&
		old.ActiveHours == sc.ActiveHours && old.Missed == sc.Missed &&
		old.Destination == sc.Destination && old.Payload.Kind == sc.Payload.Kind
}

// hbWorker runs posted jobs one at a time on a goroutine that exists only
// while jobs wait. Jobs of a kind already waiting are not queued twice;
// beyond hbQueueMax jobs are dropped (and logged).
type hbWorker struct {
	log *slog.Logger

	mu      sync.Mutex
	jobs    []hbJob
	running bool
	closed  bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

type hbJob struct {
	kind string
	fn   func(context.Context)
}

// Job kinds: a sync waiting is enough for any number of triggers.
const (
	hbSyncJob    = "sync"
	hbDeliverJob = "deliver"
	hbQueueMax   = 64
)

// hbJobTimeout bounds one job: a delivery or a sync that hangs must not
// hold the others forever.
const hbJobTimeout = 2 * time.Minute

func (w *hbWorker) post(kind string, fn func(context.Context)) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	for _, j := range w.jobs {
		if kind == hbSyncJob && j.kind == kind {
			return true
		}
	}
	if len(w.jobs) >= hbQueueMax {
		w.log.Warn("heartbeat work queue is full; a job is dropped", "kind", kind)
		return false
	}
	w.jobs = append(w.jobs, hbJob{kind, fn})
	if !w.running {
		if w.ctx == nil {
			w.ctx, w.cancel = context.WithCancel(context.Background())
		}
		w.running = true
		w.wg.Go(w.run)
	}
	return true
}

func (w *hbWorker) run() {
	for {
		w.mu.Lock()
		if len(w.jobs) == 0 || w.closed {
			w.running = false
			w.mu.Unlock()
			return
		}
		j := w.jobs[0]
		w.jobs = w.jobs[1:]
		ctx := w.ctx
		w.mu.Unlock()
		jctx, cancel := context.WithTimeout(ctx, hbJobTimeout)
		j.fn(jctx)
		cancel()
	}
}

// close drops the jobs waiting, cancels the one running and waits for it.
func (w *hbWorker) close() {
	w.mu.Lock()
	w.closed = true
	w.jobs = nil
	if w.cancel != nil {
		w.cancel()
	}
	w.mu.Unlock()
	w.wg.Wait()
}

// notify hands what a heartbeat said to the notification path: the
// agent's spec.notify, by default the chat n names (the one the agent last
// talked with), else the log. Without a chat the session is left out, so
// that a chat delivery does not look for the heartbeat session's chat.
func (h *heartbeats) notify(a *App, n hbNotice) error {
	x := notify.Notification{Agent: n.Agent, Gateway: n.Gateway, ChatID: n.ChatID, Text: n.Text,
		Title: n.Agent + " heartbeat", Origin: agents.OriginHeartbeat}
	if n.Gateway != "" {
		x.SessionID = n.SessionID
	}
	a.notify.Notify(x)
	return nil
}
