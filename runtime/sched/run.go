package sched

import (
	"context"
	"errors"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// maxWait bounds the timer: the wall clock may jump (NTP setting a Pi's
// clock after boot, a suspended machine), and the heap is read again at
// least this often.
const maxWait = time.Minute

// idleWait is the timer's wait when no schedule is armed.
const idleWait = 24 * time.Hour

// stallDelay is how long a schedule waits before it is tried again when
// its firing could record nothing at all (the database failing).
const stallDelay = time.Minute

// Run loads the active schedules, fires those that fell due while the
// daemon was down (once each, as their missed policy says), and then
// serves the one timer until ctx ends; it returns after the firings in
// progress have returned. It returns an error only when the schedules
// cannot be loaded or Run is already running.
func (s *Service) Run(ctx context.Context) error {
	if s.firer == nil || s.db == nil {
		return errors.New("the scheduler needs a database and a Firer: pass both in Options")
	}
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return errors.New("the scheduler is already running: run it once per database")
	}
	s.running = true
	s.mu.Unlock()
	defer func() {
		s.wg.Wait()
		s.mu.Lock()
		s.running = false
		s.heap.reset()
		s.mu.Unlock()
	}()
	if err := s.loadAll(); err != nil {
		return err
	}
	timer := time.NewTimer(s.maxWait)
	defer timer.Stop()
	for {
		timer.Reset(s.dispatch(ctx))
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-s.wake:
		}
	}
}

// loadAll arms every active schedule.
func (s *Service) loadAll() error {
	type entry struct {
		id   string
		next time.Time
	}
	var all []entry
	err := s.db.View(func(tx *storage.Tx) error {
		return scanBrief(tx, func(b *brief) {
			if b.Status == Active && !b.Next.IsZero() && b.ID != "" {
				all = append(all, entry{b.ID, b.Next})
			}
		})
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	for _, e := range all {
		s.heap.set(e.id, e.next)
	}
	s.mu.Unlock()
	s.log.Info("schedules loaded", "active", len(all))
	return nil
}

// dispatch hands the due schedules to workers, as many as there are free
// workers, and returns how long the timer should wait.
func (s *Service) dispatch(ctx context.Context) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().UnixNano()
	for s.heap.Len() > 0 {
		top := s.heap.items[0]
		if top.next > now {
			return min(time.Duration(top.next-now), s.maxWait)
		}
		if len(s.inflight) >= s.workers {
			return s.maxWait // a worker that ends wakes the timer
		}
		s.heap.remove(top.id)
		if _, busy := s.inflight[top.id]; busy {
			continue // its worker arms it again when it is done
		}
		s.inflight[top.id] = struct{}{}
		s.wg.Add(1)
		go s.work(ctx, top.id)
	}
	return idleWait // nothing armed: whatever arms something wakes the timer
}

// work fires schedule id, then arms it for its next run.
func (s *Service) work(ctx context.Context, id string) {
	defer s.wg.Done()
	firedDue, err := s.fire(ctx, id)
	if err != nil && ctx.Err() == nil {
		s.log.Error("schedule run not recorded: trying again later", "schedule_id", id, "err", err)
	}
	// The record is read under the lock: a Report or Cancel that
	// committed before this read is seen here, and one that commits after
	// it re-arms (or disarms) once the lock is free and id is no longer
	// in flight.
	s.mu.Lock()
	defer s.poke()
	defer s.mu.Unlock()
	delete(s.inflight, id)
	if !s.running || ctx.Err() != nil {
		return
	}
	sc, ok, lerr := s.load(id)
	switch {
	case lerr != nil || err != nil:
		s.heap.set(id, s.now().Add(stallDelay))
	case !ok || sc.Status != Active || sc.Next.IsZero():
		s.heap.remove(id)
	case !firedDue.IsZero() && !sc.Next.After(firedDue):
		// Nothing moved it on: a Firer that returned nil without
		// recording. Do not fire it again at once.
		s.log.Error("schedule fired but not recorded: check the Firer runs Firing.Record", "schedule_id", id)
		s.heap.set(id, s.now().Add(stallDelay))
	default:
		s.heap.set(id, sc.Next)
	}
}

// arm sets id's next run in the running timer's heap, and wakes it.
func (s *Service) arm(id string, next time.Time) {
	s.mu.Lock()
	if s.running {
		if _, busy := s.inflight[id]; !busy && !next.IsZero() {
			s.heap.set(id, next)
		}
	}
	s.mu.Unlock()
	s.poke()
}

// disarm removes id from the running timer's heap.
func (s *Service) disarm(id string) {
	s.mu.Lock()
	s.heap.remove(id)
	s.mu.Unlock()
	s.poke()
}

// poke wakes the timer goroutine without blocking.
func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
