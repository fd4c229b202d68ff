package sched

import (
	"context"
	"fmt"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// Report tells the service how the turn of a task it fired ended (the
// turn with origin "schedule:<id>"): the last fired run's outcome becomes
// ok or failed. A failure is retried as the schedule's Retry says (a
// one-shot becomes active again for it); once the retries are spent, a
// recurring schedule simply goes on with its next run. A report for a run
// already reported, or for a schedule that never fired, changes nothing.
//
// Report waits for DB.Commit: never call it on the runtime loop's
// goroutine (a TurnEnded handler runs there); hand it to a worker.
func (s *Service) Report(ctx context.Context, id string, ok bool, errMsg string) error {
	sc, found, err := s.load(id)
	if err != nil {
		return err
	}
	if !found {
		return notFound(id)
	}
	if sc.LastRun == nil || sc.LastRun.Outcome != RunFired {
		return nil
	}
	now := s.now()
	run := *sc.LastRun
	var (
		retryAt time.Time
		attempt int
	)
	switch pol, retries := retryPolicy(&sc); {
	case ok:
		run.Outcome, run.Error = RunOK, ""
	case retries && run.Attempt < pol.MaxRetries && sc.Status != Cancelled:
		run.Outcome, run.Error = RunRetrying, clip(errMsg)
		retryAt, attempt = now.Add(backoff(pol, run.Attempt)), run.Attempt+1
	default:
		run.Outcome, run.Error = RunFailed, clip(errMsg)
	}
	var next time.Time
	err = s.db.Commit(ctx, func(tx *storage.Tx) error {
		next = time.Time{}
		err := mutate(tx, id, func(cur *Schedule) {
			if cur.LastRun == nil || !cur.LastRun.Due.Equal(run.Due) || cur.LastRun.Attempt != run.Attempt {
				return // another run came since
			}
			r := run
			r.SessionID = cur.LastRun.SessionID
			cur.LastRun = &r
			if run.Outcome == RunFailed {
				cur.Failures++
			}
			if !retryAt.IsZero() && cur.Status != Cancelled {
				cur.Status, cur.Next, cur.Attempt = Active, retryAt, attempt
			}
			next = cur.Next
		})
		if err != nil {
			return err
		}
		return s.updateRun(tx, id, run)
	})
	if err != nil {
		return fmt.Errorf("report schedule run: %w", err)
	}
	attrs := []any{"schedule_id", id, "agent", sc.Agent, "due", run.Due, "missed", run.Missed, "attempt", run.Attempt}
	switch run.Outcome {
	case RunRetrying:
		s.log.Warn("scheduled task failed: retrying", append(attrs, "err", run.Error, "retry_at", retryAt)...)
	case RunFailed:
		s.log.Error("scheduled task failed", append(attrs, "err", run.Error)...)
	}
	if !next.IsZero() {
		s.arm(id, sc.Agent, next)
	}
	return nil
}

// updateRun rewrites the logged run with run's due and attempt, keeping
// the session it went to; a run pruned from the log is not written back.
func (s *Service) updateRun(tx *storage.Tx, id string, run Run) error {
	k := runKey(id, run.Due, run.Attempt)
	old, err := tx.IndexGet(scope, kindRuns, k)
	if err != nil || old == nil {
		return err
	}
	return putRun(tx, id, &run)
}
