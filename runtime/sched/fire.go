package sched

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// maxRunError bounds the error text a run's log keeps.
const maxRunError = 1 << 10

// fire runs the schedule of d if it is due: hands it to the Firer (which
// records it), or records it skipped, or records the Firer's failure.
// firedDue is the due time it acted on (zero when it did nothing); err is
// set when nothing could be recorded.
func (s *Service) fire(ctx context.Context, d due) (firedDue time.Time, err error) {
	now, id := s.now(), d.id
	sc, ok, err := s.load(id)
	if err != nil || !ok || sc.Status != Active || sc.Next.IsZero() || sc.Next.After(now) {
		return time.Time{}, err
	}
	t, err := prepare(&sc, s.loc)
	if err != nil {
		// Stored, then made invalid (a zone gone from the system): it
		// cannot say when it runs, so it ends, logged.
		s.log.Error("schedule cannot run: its timing is invalid", "schedule_id", id, "agent", sc.Agent, "err", err)
		r := Run{Due: sc.Next, Attempt: sc.Attempt, Outcome: RunFailed, Error: clip(err.Error())}
		return sc.Next, s.record(ctx, &sc, r, time.Time{}, Completed, 0)
	}
	run := Run{Due: sc.Next, Attempt: sc.Attempt}
	if sc.Attempt == 0 {
		run.Late, run.Missed = lateness(t, d, run.Due, now)
	}
	attrs := []any{"schedule_id", id, "agent", sc.Agent, "due", run.Due, "missed", run.Missed}
	next, status := advance(&sc, t, now)
	if run.Late && sc.Missed == MissedSkip {
		s.log.Warn("schedule runs missed while down: skipped, as its policy says", attrs...)
		return run.Due, s.skip(ctx, &sc, run, next, status, SkipMissed,
			"it was due while the daemon was down, and its missed policy is skip")
	}
	if run.Late {
		s.log.Warn("schedule runs missed while down: running once, late", attrs...)
	}
	turn := sc.Payload.StartsTurn()
	if turn {
		if n, ok := s.turns.take(sc.Agent, now); !ok {
			return run.Due, s.skip(ctx, &sc, run, next, status, SkipTurnCeiling, ceilingReason(sc.Agent, n))
		}
	}
	run.Fired, run.Outcome = now, RunFired
	var session sessionBox
	f := Firing{
		Schedule:   sc,
		Run:        run,
		SetSession: session.set,
		Record: func(tx *storage.Tx) error {
			r := run
			r.SessionID = session.get()
			return recordTx(tx, &sc, r, next, status, 0)
		},
	}
	ferr := s.firer.Fire(ctx, f)
	if ferr == nil {
		return run.Due, nil
	}
	if turn {
		s.turns.giveBack(sc.Agent, now) // it started nothing
	}
	if ctx.Err() != nil {
		return run.Due, nil // shutting down: not recorded, so it runs again after the restart
	}
	var skipped *SkipError
	if errors.As(ferr, &skipped) {
		return run.Due, s.skip(ctx, &sc, run, next, status, skipped.Code, skipped.Reason)
	}
	run.Error = clip(ferr.Error())
	return run.Due, s.failed(ctx, &sc, t, run, now)
}

// lateness reports whether a first try due at due is late, and how many
// ticks fell due meanwhile (0 when it is on time). It is measured when the
// run was first found due: a hold for its agent's spacing is no downtime.
func lateness(t *timing, d due, dueAt, now time.Time) (bool, int) {
	found := now
	if d.since != 0 {
		found = time.Unix(0, d.since)
	}
	if n := t.missed(dueAt, found); n > 1 || found.Sub(dueAt) > lateAfter {
		return true, n
	}
	return false, 0
}

// skip records run as skipped for reason, counted under code, and moves
// the schedule on to next and status; it logs once the record is written.
func (s *Service) skip(ctx context.Context, sc *Schedule, run Run, next time.Time, status Status, code, reason string) error {
	run.Fired, run.Outcome, run.Reason = time.Time{}, RunSkipped, clip(reason)
	s.tally.skip(code)
	err := s.record(ctx, sc, run, next, status, 0)
	if code != SkipMissed && err == nil {
		s.log.Warn("schedule run skipped", "schedule_id", sc.ID, "agent", sc.Agent, "due", run.Due,
			"cause", code, "reason", run.Reason)
	}
	return err
}

// advance returns where a schedule goes after its run at now: a recurring
// one to its next tick after now, a one-shot (or a recurring one that
// will never run again) to completed.
func advance(sc *Schedule, t *timing, now time.Time) (time.Time, Status) {
	if !sc.Recurring() {
		return time.Time{}, Completed
	}
	if next := t.next(now); !next.IsZero() {
		return next, Active
	}
	return time.Time{}, Completed
}

// failed records run as failed, retried later when sc's Retry allows.
func (s *Service) failed(ctx context.Context, sc *Schedule, t *timing, run Run, now time.Time) error {
	attrs := []any{"schedule_id", sc.ID, "agent", sc.Agent, "due", run.Due, "missed", run.Missed, "attempt", run.Attempt, "err", run.Error}
	if pol, ok := retryPolicy(sc); ok && run.Attempt < pol.MaxRetries {
		run.Outcome = RunRetrying
		at := now.Add(backoff(pol, run.Attempt))
		s.log.Warn("schedule run failed: retrying", append(attrs, "retry_at", at)...)
		return s.record(ctx, sc, run, at, Active, run.Attempt+1)
	}
	run.Outcome = RunFailed
	next, status := advance(sc, t, now)
	s.log.Error("schedule run failed", append(attrs, "next", next)...)
	return s.record(ctx, sc, run, next, status, 0)
}

// record commits run and the schedule's next state in a transaction of
// its own.
func (s *Service) record(ctx context.Context, sc *Schedule, run Run, next time.Time, status Status, attempt int) error {
	return s.db.Commit(ctx, func(tx *storage.Tx) error {
		return recordTx(tx, sc, run, next, status, attempt)
	})
}

// recordTx writes run to sc's log and moves the stored schedule on to
// next, status and attempt, unless it changed since sc was read (it was
// cancelled or replaced meanwhile: then only the counts move). It reads
// and writes only the Tx, so it is safe to run twice.
func recordTx(tx *storage.Tx, sc *Schedule, run Run, next time.Time, status Status, attempt int) error {
	err := mutate(tx, sc.ID, func(cur *Schedule) {
		if cur.Status == Active && cur.Next.Equal(run.Due) && cur.Attempt == run.Attempt && sameTiming(cur, sc) {
			cur.Next, cur.Status, cur.Attempt = next, status, attempt
		}
		switch run.Outcome {
		case RunFailed:
			cur.Runs++
			cur.Failures++
		case RunFired:
			cur.Runs++
		}
		r := run
		cur.LastRun = &r
	})
	if err != nil {
		return err
	}
	return putRun(tx, sc.ID, &run)
}

// sessionBox holds the session a Firer reports, between SetSession and
// Record, which may run on different goroutines.
type sessionBox struct {
	mu sync.Mutex
	id string
}

func (b *sessionBox) set(id string) {
	b.mu.Lock()
	b.id = id
	b.mu.Unlock()
}

func (b *sessionBox) get() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.id
}

// clip cuts an error text to maxRunError bytes.
func clip(s string) string {
	if len(s) <= maxRunError {
		return s
	}
	return strings.ToValidUTF8(s[:maxRunError], "") + "…"
}
