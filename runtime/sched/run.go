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
		id, agent string
		next      time.Time
	}
	var all []entry
	agents := map[string]string{} // one copy of each agent's name for all its entries
	err := s.db.View(func(tx *storage.Tx) error {
		return scanBrief(tx, func(b *brief) {
			if b.Status == Active && !b.Next.IsZero() && b.ID != "" {
				agent, ok := agents[b.Agent]
				if !ok {
					agent = b.Agent
					agents[agent] = agent
				}
				all = append(all, entry{b.ID, agent, b.Next})
			}
		})
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	for _, e := range all {
		s.heap.set(e.id, e.agent, e.next)
	}
	s.mu.Unlock()
	s.log.Info("schedules loaded", "active", len(all))
	return nil
}

// dispatch hands the due schedules to workers, as many as there are free
// workers, and returns how long the timer should wait. A due run whose
// agent had a run less than MinRunGap ago is held until that much time has
// passed: however many schedules an agent has (a burst of one-shots, many
// intervals, retries), its runs come at most one per MinRunGap. A hold
// moves a heap entry, reading nothing and starting nothing.
func (s *Service) dispatch(ctx context.Context) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().UnixNano()
	for agent, free := range s.spacing {
		if free <= now {
			delete(s.spacing, agent) // only agents that ran within MinRunGap stay
		}
	}
	for s.heap.Len() > 0 {
		top := s.heap.items[0]
		if top.next > now {
			return min(time.Duration(top.next-now), s.maxWait)
		}
		if len(s.inflight) >= s.workers {
			return s.maxWait // a worker that ends wakes the timer
		}
		if _, busy := s.inflight[top.id]; busy {
			s.heap.remove(top.id)
			continue // its worker arms it again when it is done
		}
		if free, ok := s.spacing[top.agent]; ok && free > now {
			if s.heap.hold(free, now) {
				s.tally.hold()
			}
			continue
		}
		s.heap.remove(top.id)
		s.spacing[top.agent] = now + int64(MinRunGap)
		s.inflight[top.id] = struct{}{}
		s.wg.Add(1)
		go s.work(ctx, top)
	}
	return idleWait // nothing armed: whatever arms something wakes the timer
}

// work fires the schedule of d, then arms it for its next run.
func (s *Service) work(ctx context.Context, d due) {
	defer s.wg.Done()
	id := d.id
	firedDue, err := s.fire(ctx, d)
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
		s.heap.set(id, d.agent, s.now().Add(stallDelay))
	case !ok || sc.Status != Active || sc.Next.IsZero():
		s.heap.remove(id)
	case !firedDue.IsZero() && !sc.Next.After(firedDue):
		// Nothing moved it on: a Firer that returned nil without
		// recording. Do not fire it again at once.
		s.log.Error("schedule fired but not recorded: check the Firer runs Firing.Record", "schedule_id", id)
		s.heap.set(id, sc.Agent, s.now().Add(stallDelay))
	default:
		s.heap.set(id, sc.Agent, sc.Next)
	}
}

// arm sets the next run of id (agent's) in the running timer's heap, and
// wakes it.
func (s *Service) arm(id, agent string, next time.Time) {
	s.mu.Lock()
	if s.running {
		if _, busy := s.inflight[id]; !busy && !next.IsZero() {
			s.heap.set(id, agent, next)
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
