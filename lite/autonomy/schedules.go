package autonomy

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

// Schedules is the daemon's side of the schedules: the service (created
// in Open, so the CLI can list and cancel in process), its timer (run by
// Serve only: schedules never fire from `run -m` or `chat`) and the
// worker that hands task outcomes to it off the loop goroutine (started by
// the first outcome, in any process: a task's turn interrupted by a stop
// may end after a restart, in serve or in chat). It is the service's
// Firer (fire.go).
type Schedules struct {
	svc      *sched.Service
	loop     *runtime.Loop
	chats    Chats
	gateways Gateways
	hb       *Heartbeats
	log      *slog.Logger
	// Test seams (nil in the daemon): inCommit runs in the transaction
	// that stores the message and records the run, before the record;
	// stored once it is committed, before the gateway is asked.
	inCommit, stored func()

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

// SchedulesOptions are what the schedules are made of.
type SchedulesOptions struct {
	// Loop is where the schedules and their runs are stored and where
	// their messages go.
	Loop            *runtime.Loop
	Location        *time.Location
	MaxTurnsPerHour int
	// Now is the schedules' clock (nil: time.Now); tests move it.
	Now      func() time.Time
	Logger   *slog.Logger
	Chats    Chats
	Gateways Gateways
	// Heartbeats runs the heartbeat schedules' runs; the schedules'
	// service becomes its scheduler unless it was given one.
	Heartbeats *Heartbeats
	// InCommit and Stored are test seams (nil in the daemon): InCommit
	// runs in the transaction that stores a run's message and records the
	// run, Stored once that is committed, before the gateway is asked.
	InCommit, Stored func()
}

// schedReport is one task turn's outcome for its schedule.
type schedReport struct {
	id     string
	ok     bool
	errMsg string
}

// NewSchedules creates the service over the loop's store. Nothing runs
// until Start.
func NewSchedules(o SchedulesOptions) *Schedules {
	s := &Schedules{loop: o.Loop, chats: o.Chats, gateways: o.Gateways, hb: o.Heartbeats, log: o.Logger,
		inCommit: o.InCommit, stored: o.Stored, reports: make(chan schedReport, maxSchedReports)}
	s.svc = sched.New(sched.Options{DB: o.Loop, Firer: s, Location: o.Location,
		Logger: o.Logger, Now: o.Now, MaxTurnsPerHour: o.MaxTurnsPerHour})
	if s.hb != nil && s.hb.sched == nil {
		s.hb.sched = s.svc // in this package, before anything runs
	}
	return s
}

// Service is the schedule service: list, show and cancel work without
// Start; only the timer fires them.
func (s *Schedules) Service() *sched.Service { return s.svc }

// Start starts the schedules' timer (Serve, once the gateways run, so a
// firing finds its gateway). ctx bounds its life; StopTimer or Stop end
// it sooner.
func (s *Schedules) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil || s.closed {
		return nil
	}
	ctx, stop := context.WithCancel(ctx)
	s.stop = stop
	s.timerWG.Go(func() {
		if err := s.svc.Run(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("the scheduler stopped: schedules do not fire until the next start", "err", err)
		}
	})
	return nil
}

// StopTimer stops the timer and waits for it, at most until ctx's
// deadline: no schedule fires from now on (shutdown, before the turns
// drain). Task outcomes are still reported until Stop.
func (s *Schedules) StopTimer(ctx context.Context) error {
	s.mu.Lock()
	stop := s.stop
	s.stop = nil
	s.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	return wait(ctx, &s.timerWG)
}

// Stop stops the timer, then the report worker once it has reported
// what is queued (Close, before the loop stops: reports commit through
// it), waiting at most until ctx's deadline.
func (s *Schedules) Stop(ctx context.Context) error {
	if err := s.StopTimer(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.reports)
	}
	s.mu.Unlock()
	return wait(ctx, &s.workWG)
}

// TurnEnded is the loop's turn-end handler: a turn a schedule started
// reports its outcome. It runs on the loop goroutine, so it only queues.
func (s *Schedules) TurnEnded(te runtime.TurnEnd) {
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
	s.mu.Lock() // Stop closes the queue under it
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if !s.working {
		s.working = true
		s.workWG.Go(s.work)
	}
	select {
	case s.reports <- r:
	default:
		s.dropped.Add(1)
		s.log.Warn("too many schedule outcomes at once: one is not recorded (its run stays fired)", "schedule", id)
	}
}

// work reports task outcomes to the service until the queue closes.
func (s *Schedules) work() {
	for r := range s.reports {
		if r.ok {
			s.ok.Add(1)
		} else {
			s.failed.Add(1)
		}
		err := s.svc.Report(context.Background(), r.id, r.ok, r.errMsg)
		if err != nil && !errors.Is(err, sched.ErrNotFound) {
			s.log.Warn("cannot record how a scheduled task went", "schedule", r.id, "err", err)
		}
	}
}

// RunCounts are the schedule runs the daemon saw since it started, by
// outcome: Fired, a run's message was stored; Errors, a firing stored
// nothing (the service retries it or goes on); OK and Failed, how a
// task's turn ended; Dropped, a task's outcome that could not be queued.
type RunCounts struct {
	Fired, Errors, OK, Failed, Dropped uint64
}

// Runs counts the runs so far (metrics).
func (s *Schedules) Runs() RunCounts {
	return RunCounts{Fired: s.fired.Load(), Errors: s.fireErrors.Load(), OK: s.ok.Load(),
		Failed: s.failed.Load(), Dropped: s.dropped.Load()}
}
