package lite

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
)

// maxSchedReports bounds the task outcomes waiting for the report worker;
// past it an outcome is dropped (logged) and its run stays "fired".
const maxSchedReports = 256

// schedHost is the daemon's side of the schedules: the service (created
// in Open, so the CLI can list and cancel in process), its timer (run by
// Serve only: schedules never fire from `run -m` or `chat`) and the
// worker that hands task outcomes to it off the loop goroutine (started by
// the first outcome, in any process: a task's turn interrupted by a stop
// may end after a restart, in serve or in chat).
type schedHost struct {
	svc   *sched.Service
	firer *schedFirer
	log   *slog.Logger

	reports chan schedReport
	// runs count what the daemon saw of runs, by outcome (metrics).
	fired, fireErrors, ok, failed, dropped atomic.Uint64

	mu      sync.Mutex
	stop    context.CancelFunc // ends the timer; nil when it does not run
	working bool               // the report worker was started
	closed  bool               // reports is closed
	timerWG sync.WaitGroup
	workWG  sync.WaitGroup
}

// schedReport is one task turn's outcome for its schedule.
type schedReport struct {
	id     string
	ok     bool
	errMsg string
}

// newSchedHost creates the service over the loop's store. Nothing runs
// until start.
func newSchedHost(a *App, now func() time.Time) *schedHost {
	h := &schedHost{log: a.log, reports: make(chan schedReport, maxSchedReports)}
	h.firer = &schedFirer{a: a, host: h}
	h.svc = sched.New(sched.Options{DB: a.Loop, Firer: h.firer, Location: a.Config.Scheduler.Location(),
		Logger: a.log, Now: now, MaxTurnsPerHour: a.Config.Scheduler.MaxTurnsPerHour})
	return h
}

// Schedules is the schedule service: list, show and cancel work without
// Serve; only Serve fires them.
func (a *App) Schedules() *sched.Service { return a.sched.svc }

// runSchedules starts the schedules' timer (Serve, once the gateways
// run, so a firing finds its gateway).
func (a *App) runSchedules() {
	h := a.sched
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stop != nil || h.closed {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	h.stop = stop
	h.timerWG.Go(func() {
		if err := h.svc.Run(ctx); err != nil && ctx.Err() == nil {
			h.log.Error("the scheduler stopped: schedules do not fire until the next start", "err", err)
		}
	})
}

// stopSchedules stops the timer and waits for it: no schedule fires
// from now on (shutdown, before the turns drain). Task outcomes are still
// reported until close.
func (a *App) stopSchedules() {
	h := a.sched
	h.mu.Lock()
	stop := h.stop
	h.stop = nil
	h.mu.Unlock()
	if stop != nil {
		stop()
		h.timerWG.Wait()
	}
}

// close stops the timer, then the report worker once it has reported
// what is queued (Close, before the loop stops: reports commit through
// it).
func (h *schedHost) close(a *App) {
	a.stopSchedules()
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.reports)
	}
	h.mu.Unlock()
	h.workWG.Wait()
}

// turnEnded is the onTurnEnd handler: a turn a schedule started reports
// its outcome. It runs on the loop goroutine, so it only queues.
func (h *schedHost) turnEnded(te runtime.TurnEnd) {
	id, ok := sched.FromOrigin(te.Origin)
	if !ok {
		return
	}
	r := schedReport{id: id, ok: te.Reason == runtime.TurnCompleted}
	if !r.ok {
		r.errMsg = "the task's turn ended " + te.Reason
		if te.Error != "" {
			r.errMsg += ": " + te.Error // why, in its own sentence (its daily token budget, the model)
		}
	}
	h.mu.Lock() // close closes the queue under it
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	if !h.working {
		h.working = true
		h.workWG.Go(h.work)
	}
	select {
	case h.reports <- r:
	default:
		h.dropped.Add(1)
		h.log.Warn("too many schedule outcomes at once: one is not recorded (its run stays fired)", "schedule", id)
	}
}

// work reports task outcomes to the service until the queue closes.
func (h *schedHost) work() {
	for r := range h.reports {
		if r.ok {
			h.ok.Add(1)
		} else {
			h.failed.Add(1)
		}
		err := h.svc.Report(context.Background(), r.id, r.ok, r.errMsg)
		if err != nil && !errors.Is(err, sched.ErrNotFound) {
			h.log.Warn("cannot record how a scheduled task went", "schedule", r.id, "err", err)
		}
	}
}
