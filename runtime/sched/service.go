package sched

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// DB is the database the service keeps schedules in: the runtime loop
// (View reads, Commit joins the loop's group commit), or, in a process
// without a loop (the CLI on a stopped daemon's file), FromStore.
type DB interface {
	View(func(*storage.Tx) error) error
	Commit(context.Context, func(*storage.Tx) error) error
}

// FromStore adapts a storage.Store to DB: Commit is one Update of its
// own. For processes without a runtime loop; the daemon passes its loop.
func FromStore(st *storage.Store) DB { return storeDB{st} }

type storeDB struct{ st *storage.Store }

func (d storeDB) View(fn func(*storage.Tx) error) error { return d.st.View(fn) }

func (d storeDB) Commit(ctx context.Context, fn func(*storage.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.st.Update(fn)
}

// Options configure New. Zero fields take their defaults.
type Options struct {
	DB    DB
	Firer Firer
	// Location is the zone of schedules that name none (nil: time.Local).
	Location *time.Location
	Logger   *slog.Logger
	// Now is the clock (nil: time.Now); tests pass a fake one.
	Now func() time.Time
	// Workers bounds the firings in progress at once (default 2).
	Workers int
	// MaxTurnsPerHour bounds the turns (task and heartbeat runs) one
	// agent's schedules start in any hour: past it a run is skipped,
	// recorded and counted, never queued. 0: DefaultMaxTurnsPerHour; at
	// most MaxTurnsPerHourLimit.
	MaxTurnsPerHour int
}

// MaxActivePerAgent bounds the active schedules of one agent.
const MaxActivePerAgent = 1000

// ErrNotFound is returned by Get, Cancel and Report for an id that names
// no schedule (or, for Cancel with an agent, another agent's schedule).
// The concrete error is a *NotFoundError naming the id.
var ErrNotFound = errors.New("no such schedule: list them with `agnx-lite schedule list`")

// NotFoundError is ErrNotFound for one id.
type NotFoundError struct{ ID string }

// Error says which id, and how to find the right one.
func (e *NotFoundError) Error() string {
	id := e.ID
	if len(id) > maxIDLen {
		id = id[:maxIDLen] + "…"
	}
	return fmt.Sprintf("no schedule %q: list them with `agnx-lite schedule list`", id)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

func notFound(id string) error { return &NotFoundError{ID: id} }

// Service keeps schedules and fires them when they fall due.
//
// Create, Put, Cancel, Get and List work on the database whether or not
// Run is running; while it runs they also re-arm its timer. Run owns one
// timer and a min-heap of (next run, id) for all active schedules: a
// schedule costs no goroutine while it waits, and its full record is read
// from the database only when it fires.
type Service struct {
	db      DB
	firer   Firer
	loc     *time.Location
	log     *slog.Logger
	now     func() time.Time
	workers int
	// maxWait bounds the timer (maxWait; tests that span years raise it).
	maxWait time.Duration

	createMu sync.Mutex // makes Create's per-agent count and its commit one step
	turns    *turnLog   // the turns each agent's schedules started in the last hour
	tally    tally

	mu       sync.Mutex // guards what follows
	running  bool
	heap     dueHeap
	inflight map[string]struct{} // ids whose firing is in progress
	spacing  map[string]int64    // per agent that ran within MinRunGap, when it may run again (Unix ns)
	wake     chan struct{}       // buffer 1: the heap or the workers changed
	wg       sync.WaitGroup      // the workers
}

// New returns a service over o.DB; Run starts its timer.
func New(o Options) *Service {
	s := &Service{db: o.DB, firer: o.Firer, loc: o.Location, log: o.Logger, now: o.Now, workers: o.Workers,
		maxWait: maxWait, inflight: map[string]struct{}{}, spacing: map[string]int64{}, wake: make(chan struct{}, 1),
		turns: newTurnLog(o.MaxTurnsPerHour)}
	if s.loc == nil {
		s.loc = time.Local
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.workers <= 0 {
		s.workers = 2
	}
	s.heap.pos = map[string]int{}
	return s
}

// Get returns schedule id and its logged runs, newest first.
func (s *Service) Get(ctx context.Context, id string) (Schedule, []Run, error) {
	var sc Schedule
	var runs []Run
	err := s.db.View(func(tx *storage.Tx) error {
		var ok bool
		var err error
		if sc, ok, err = loadSchedule(tx, id); err != nil || !ok {
			if err == nil {
				err = notFound(id)
			}
			return err
		}
		runs, err = loadRuns(tx, id)
		return err
	})
	return sc, runs, err
}

// List returns agent's schedules (every agent's when agent is ""), only
// the active ones unless all is set, soonest first (those that will not
// run again last).
func (s *Service) List(ctx context.Context, agent string, all bool) ([]Schedule, error) {
	var out []Schedule
	err := s.db.View(func(tx *storage.Tx) error {
		return scanSchedules(tx, func(sc *Schedule) error {
			if (agent == "" || sc.Agent == agent) && (all || sc.Status == Active) {
				out = append(out, *sc)
			}
			return nil
		})
	})
	sortByNext(out)
	return out, err
}

// Stats returns how many schedules are active and when the next one
// runs (zero when none will).
func (s *Service) Stats() (active int, next time.Time) {
	s.mu.Lock()
	if s.running {
		active = s.heap.Len() + len(s.inflight)
		if s.heap.Len() > 0 {
			next = time.Unix(0, s.heap.items[0].next)
		}
		s.mu.Unlock()
		return active, next
	}
	s.mu.Unlock()
	_ = s.db.View(func(tx *storage.Tx) error {
		return scanBrief(tx, func(b *brief) {
			if b.Status == Active {
				active++
				if !b.Next.IsZero() && (next.IsZero() || b.Next.Before(next)) {
					next = b.Next
				}
			}
		})
	})
	return active, next
}
