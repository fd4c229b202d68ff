package autonomy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tasks"
	"github.com/agnx-lite/agnx-lite/storage"
)

// TaskGateway is the Gateway of the sessions agents work on tasks in; the
// ChatID is "<board>/<id>".
const TaskGateway = "task"

// TaskOrigin is the Origin of a task's first message.
const TaskOrigin = "task"

// maxTaskEnds bounds the turn ends waiting to be recorded on their tasks;
// past it one is dropped (logged) and its task stays in_progress.
const maxTaskEnds = 256

// retryStart is how long a task whose agent could not be started waits
// before it is tried again.
const retryStart = 10 * time.Minute

// Tasks is the daemon's side of the task boards: the store (created in
// Open, so the CLI works on a stopped daemon's boards), the one timer
// that picks up edits of the boards' files and starts the agents of ready
// tasks (Serve only), and the worker that records how a task's turn ended
// (started by the first such end, off the loop goroutine).
type Tasks struct {
	loop  *runtime.Loop
	store *tasks.Store
	cfg   config.Tasks
	log   *slog.Logger
	now   func() time.Time

	wake chan struct{} // a change that may have made a task ready
	ends chan runtime.TurnEnd

	mu      sync.Mutex
	stop    context.CancelFunc // ends the timer; nil when it does not run
	working bool
	closed  bool
	failed  map[string]time.Time // board/id → when starting it last failed
	timerWG sync.WaitGroup
	workWG  sync.WaitGroup

	// Test seams (TasksOptions).
	ticked, recorded, inCommit, started func()
}

// TasksOptions are what the task boards' host is made of.
type TasksOptions struct {
	// Loop stores the boards and runs the tasks' sessions.
	Loop   *runtime.Loop
	Config config.Tasks
	// Dir holds the boards' files.
	Dir string
	// Now is the clock (nil: time.Now); tests move it.
	Now    func() time.Time
	Logger *slog.Logger
	// Test seams (nil in the daemon): Ticked is called after each look at
	// the boards, Recorded after each turn end is recorded on its task;
	// InCommit runs in the transaction that stores a task's first message
	// and starts it, Started once that is committed.
	Ticked, Recorded, InCommit, Started func()
}

// NewTasks creates the boards' store over the loop's. Nothing runs until
// Start.
func NewTasks(o TasksOptions) *Tasks {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	h := &Tasks{loop: o.Loop, cfg: o.Config, log: o.Logger, now: now, wake: make(chan struct{}, 1),
		ends: make(chan runtime.TurnEnd, maxTaskEnds), failed: map[string]time.Time{},
		ticked: o.Ticked, recorded: o.Recorded, inCommit: o.InCommit, started: o.Started}
	h.store = tasks.New(tasks.Options{DB: o.Loop, Dir: o.Dir, Now: now, Logger: o.Logger, Changed: h.changed})
	return h
}

// Store is the task boards' store.
func (h *Tasks) Store() *tasks.Store { return h.store }

// changed is the store's hook: with start: now, a change may have made a
// task ready, so the timer looks at once. It never blocks.
func (h *Tasks) changed(string) {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Start starts the task timer (Serve). ctx bounds its life; StopTimer
// or Stop end it sooner.
func (h *Tasks) Start(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stop != nil || h.closed {
		return nil
	}
	ctx, stop := context.WithCancel(ctx)
	h.stop = stop
	h.timerWG.Go(func() { h.run(ctx) })
	return nil
}

// StopTimer stops the timer and waits for it, at most until ctx's
// deadline: no task starts from now on (shutdown, before the turns
// drain). Turn ends are still recorded until Stop.
func (h *Tasks) StopTimer(ctx context.Context) error {
	h.mu.Lock()
	stop := h.stop
	h.stop = nil
	h.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	return wait(ctx, &h.timerWG)
}

// Stop stops the timer, then the worker once it has recorded what is
// queued (Close, before the loop stops), waiting at most until ctx's
// deadline.
func (h *Tasks) Stop(ctx context.Context) error {
	if err := h.StopTimer(ctx); err != nil {
		return err
	}
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.ends)
	}
	h.mu.Unlock()
	return wait(ctx, &h.workWG)
}

// run is the timer: on every change (start: now) and every check_seconds,
// or at the next start_at, it picks up edits of the boards' files and
// starts the agents of the tasks that are due.
func (h *Tasks) run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		case <-t.C:
		}
		wait := h.cfg.Interval()
		if next := h.tick(ctx); !next.IsZero() {
			wait = min(wait, max(next.Sub(h.now()), time.Second))
		}
		t.Reset(wait)
		if h.ticked != nil {
			h.ticked()
		}
	}
}

// tick syncs every board's file and starts what is due; it returns the
// next start_at of a ready task (zero: none).
func (h *Tasks) tick(ctx context.Context) time.Time {
	h.store.SyncAll(ctx) // mistakes are logged there, once
	due, next, err := h.store.Due(ctx, h.now())
	if err != nil {
		h.log.Warn("cannot read the task boards", "err", err)
		return next
	}
	for _, t := range due {
		if ctx.Err() != nil {
			return next
		}
		if t.StartAt == nil && h.cfg.Start != config.TasksStartNow {
			continue // manual: only a start_at starts it
		}
		key := t.Board + "/" + t.ID
		if at, ok := h.failed[key]; ok && h.now().Sub(at) < retryStart {
			continue
		}
		if err := h.start(ctx, t); err != nil {
			if len(h.failed) >= tasks.MaxOpen {
				clear(h.failed)
			}
			h.failed[key] = h.now()
			h.log.Warn("cannot start the agent of a task; it is tried again in 10 minutes", "board", t.Board, "task", t.ID,
				"agent", t.Assignee, "err", err)
		}
	}
	return next
}

// start opens a session of the task's agent and sends it the task; the
// task moves to in_progress, with the session's id, in the transaction
// that stores the message, so it is started once.
func (h *Tasks) start(ctx context.Context, t tasks.Task) error {
	// A stop must not cut the start in half (the message stored, the
	// caller told it was not): only a stuck loop ends it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
	defer cancel()
	prompt := h.prompt(ctx, t)
	info, err := h.loop.CreateSession(ctx, runtime.NewSession{Agent: t.Assignee, Gateway: TaskGateway, ChatID: t.Board + "/" + t.ID,
		Principal: agents.TaskPrincipal(t.Board, t.ID)})
	if err != nil {
		return err
	}
	_, err = h.store.Begin(ctx, t.Board, t.ID, tasks.ByAgent(t.Assignee), info.ID, func(fn func(*storage.Tx) error) error {
		if h.inCommit != nil {
			inner := fn
			fn = func(tx *storage.Tx) error { h.inCommit(); return inner(tx) }
		}
		_, err := h.loop.Send(ctx, info.ID, runtime.Input{Content: prompt, Origin: TaskOrigin, Commit: fn})
		return err
	})
	if err != nil {
		if now, gerr := h.store.Get(ctx, t.Board, t.ID); gerr == nil && now.Session == info.ID {
			return nil // stored after all: the session works on it
		}
		if derr := h.loop.DeleteSession(ctx, info.ID); derr != nil {
			h.log.Warn("cannot remove the unused session of a task", "session", info.ID, "err", derr)
		}
		if errors.Is(err, tasks.ErrConflict) {
			return nil // taken meanwhile: nothing to retry
		}
		return err
	}
	if h.started != nil {
		h.started()
	}
	h.log.Info("an agent is started on its task", "board", t.Board, "task", t.ID, "agent", t.Assignee, "session", info.ID)
	return nil
}

// startTimeout bounds starting one task (a session and its first
// message).
const startTimeout = 30 * time.Second

// maxDepResult bounds each dependency's result quoted in a task's prompt.
const maxDepResult = 1 << 10

// prompt is the task as the agent's first message.
func (h *Tasks) prompt(ctx context.Context, t tasks.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are assigned task %s of the task board %q (priority %s):\n\n%s\n", t.ID, t.Board, t.Priority, t.Title)
	if t.Description != "" {
		fmt.Fprintf(&b, "\n%s\n", t.Description)
	}
	for _, d := range t.DependsOn {
		if dt, err := h.store.Get(ctx, t.Board, d); err == nil && dt.Result != "" {
			res := dt.Result
			if len(res) > maxDepResult {
				res = res[:maxDepResult] + "…"
			}
			fmt.Fprintf(&b, "\nResult of %s (%s):\n%s\n", dt.ID, dt.Title, res)
		}
	}
	b.WriteString("\nDo it now. Your final answer is recorded as the task's result and the task is marked done; " +
		"use the tasks tool for notes or follow-up tasks.")
	return b.String()
}

// TurnEnded is the loop's turn-end handler: a turn a task started records
// its outcome. It runs on the loop goroutine, so it only queues.
func (h *Tasks) TurnEnded(te runtime.TurnEnd) {
	if te.Gateway != TaskGateway || te.Origin != TaskOrigin {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	if !h.working {
		h.working = true
		h.workWG.Go(h.work)
	}
	select {
	case h.ends <- te:
	default:
		h.log.Warn("too many task outcomes at once: one is not recorded (its task stays in_progress)", "session", te.SessionID)
	}
}

// work records turn ends on their tasks until the queue closes.
func (h *Tasks) work() {
	for te := range h.ends {
		board, id, ok := strings.Cut(te.ChatID, "/")
		if !ok {
			continue
		}
		err := h.store.Finish(context.Background(), board, id, te.SessionID, tasks.ByAgent(te.Agent),
			te.Reason == runtime.TurnCompleted, te.Answer, te.Reason)
		if err != nil && !errors.Is(err, tasks.ErrNotFound) {
			h.log.Warn("cannot record how a task's turn ended", "board", board, "task", id, "err", err)
		}
		if h.recorded != nil {
			h.recorded()
		}
	}
}
