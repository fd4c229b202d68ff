package sched

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// Limits on retries, so that a schedule cannot hammer anything.
const (
	maxRetries    = 20
	maxRetryDelay = 24 * time.Hour
	// maxAhead bounds how far ahead a one-shot may be set.
	maxAhead = 100 * 366 * 24 * time.Hour
)

// validate checks what sc says (not its bookkeeping) and returns its
// timing made ready.
func (s *Service) validate(sc *Schedule) (*timing, error) {
	if sc.Agent == "" || len(sc.Agent) > maxIDLen {
		return nil, fmt.Errorf("a schedule needs its agent's name (at most %d bytes)", maxIDLen)
	}
	switch sc.Payload.Kind {
	case KindMessage, KindTask, KindHeartbeat:
	default:
		return nil, fmt.Errorf("payload kind %q is unknown: use %s or %s", sc.Payload.Kind, KindMessage, KindTask)
	}
	if len(sc.Payload.Text) > MaxPayload {
		return nil, fmt.Errorf("the %s is %d bytes, over the %d a schedule may carry: make it shorter", sc.Payload.Kind, len(sc.Payload.Text), MaxPayload)
	}
	if sc.Payload.Kind != KindHeartbeat && strings.TrimSpace(sc.Payload.Text) == "" {
		return nil, fmt.Errorf("the schedule's %s is empty: say what it should send or do", sc.Payload.Kind)
	}
	if sc.Missed != "" && sc.Missed != MissedRunOnce && sc.Missed != MissedSkip {
		return nil, fmt.Errorf("missed %q is unknown: use %s or %s", sc.Missed, MissedRunOnce, MissedSkip)
	}
	d := sc.Destination
	if len(d.Gateway) > maxIDLen || len(d.ChatID) > maxIDLen || len(d.SessionID) > maxIDLen || len(sc.ProcessHandle) > maxIDLen {
		return nil, fmt.Errorf("a schedule's destination and process handle are at most %d bytes each", maxIDLen)
	}
	if sc.Payload.Kind != KindHeartbeat && (d.Gateway == "") != (d.ChatID == "") || (d.Gateway == "" && d.SessionID == "" && sc.Payload.Kind != KindHeartbeat) {
		return nil, fmt.Errorf("a schedule needs where to post: a gateway and its chat, or a session")
	}
	if r := sc.Retry; r != nil && (r.MaxRetries < 0 || r.MaxRetries > maxRetries || r.InitialDelayMS < 0 || r.MaxDelayMS < 0 ||
		time.Duration(r.InitialDelayMS) > maxRetryDelay/time.Millisecond || time.Duration(r.MaxDelayMS) > maxRetryDelay/time.Millisecond) {
		return nil, fmt.Errorf("retries are 0 to %d, with delays of at most %s", maxRetries, maxRetryDelay)
	}
	t, err := prepare(sc, s.loc)
	if err != nil {
		return nil, err
	}
	if err := t.checkFloor(); err != nil {
		return nil, err
	}
	if t.At != nil && t.At.After(s.now().Add(maxAhead)) {
		return nil, fmt.Errorf("at %s is more than 100 years ahead: give a nearer time", t.At.Format(time.RFC3339))
	}
	return t, nil
}

// Create validates sc and stores it as a new active schedule with a fresh
// id (sched_<ULID>), its creation time and its next run, and arms it.
// A one-shot's time must be in the future; an agent may have at most
// MaxActivePerAgent active schedules.
func (s *Service) Create(ctx context.Context, sc Schedule) (Schedule, error) {
	t, err := s.validate(&sc)
	if err != nil {
		return Schedule{}, err
	}
	now := s.now()
	if t.At != nil && !t.At.After(now) {
		return Schedule{}, fmt.Errorf("at %s is not in the future: give a later time", t.At.Format(time.RFC3339))
	}
	if t.EverySeconds > 0 && t.Anchor.IsZero() {
		sc.Timing.Anchor, t.Anchor = now, now
	}
	sc.ID, sc.CreatedAt, sc.Status = runtime.NewID(IDPrefix, now), now, Active
	sc.Attempt, sc.Runs, sc.Failures, sc.LastRun = 0, 0, 0, nil
	if sc.Next = t.next(now); sc.Next.IsZero() {
		return Schedule{}, fmt.Errorf("the schedule would never run: check its cron expression's year")
	}
	b, err := encodeSchedule(&sc)
	if err != nil {
		return Schedule{}, err
	}
	s.createMu.Lock()
	defer s.createMu.Unlock()
	if n, err := s.countActive(sc.Agent); err != nil {
		return Schedule{}, err
	} else if n >= MaxActivePerAgent {
		return Schedule{}, fmt.Errorf("agent %s already has %d active schedules, the most it may: cancel some first", sc.Agent, n)
	}
	if err := s.db.Commit(ctx, func(tx *storage.Tx) error { return putSchedule(tx, sc.ID, b) }); err != nil {
		return Schedule{}, fmt.Errorf("store schedule: %w", err)
	}
	s.arm(sc.ID, sc.Agent, sc.Next)
	return sc, nil
}

// countActive counts agent's active schedules.
func (s *Service) countActive(agent string) (int, error) {
	n := 0
	err := s.db.View(func(tx *storage.Tx) error {
		return scanBrief(tx, func(b *brief) {
			if b.Agent == agent && b.Status == Active {
				n++
			}
		})
	})
	return n, err
}

// Put creates or replaces the schedule sc.ID (lite's own schedules, such
// as the heartbeats "hb_<agent>"), active. When a schedule of that id has
// the same timing and active hours, its next run, counts and last run are
// kept, so a restart neither moves nor repeats it; otherwise the next run
// is computed afresh. A one-shot's time may have passed: it runs once.
func (s *Service) Put(ctx context.Context, sc Schedule) (Schedule, error) {
	if sc.ID == "" || len(sc.ID) > maxIDLen || strings.ContainsRune(sc.ID, 0) {
		return Schedule{}, fmt.Errorf("a schedule put needs an id of 1 to %d bytes", maxIDLen)
	}
	old, found, err := s.load(sc.ID)
	if err != nil {
		return Schedule{}, err
	}
	if found && sc.Timing.EverySeconds > 0 && sc.Timing.Anchor.IsZero() {
		sc.Timing.Anchor = old.Timing.Anchor
	}
	t, err := s.validate(&sc)
	if err != nil {
		return Schedule{}, err
	}
	now := s.now()
	sc.Status, sc.CreatedAt = Active, now
	sc.Attempt, sc.Runs, sc.Failures, sc.LastRun, sc.Next = 0, 0, 0, nil, time.Time{}
	if found {
		sc.CreatedAt, sc.Runs, sc.Failures, sc.LastRun = old.CreatedAt, old.Runs, old.Failures, old.LastRun
		if old.Status == Active && sameTiming(&old, &sc) {
			sc.Next, sc.Attempt = old.Next, old.Attempt
		}
	}
	if sc.Next.IsZero() {
		if t.EverySeconds > 0 && sc.Timing.Anchor.IsZero() {
			sc.Timing.Anchor, t.Anchor = now, now
		}
		if sc.Next = t.next(now); t.At != nil {
			sc.Next = t.window(*t.At)
		}
	}
	if sc.Next.IsZero() {
		return Schedule{}, fmt.Errorf("the schedule would never run: check its cron expression's year")
	}
	b, err := encodeSchedule(&sc)
	if err != nil {
		return Schedule{}, err
	}
	if err := s.db.Commit(ctx, func(tx *storage.Tx) error { return putSchedule(tx, sc.ID, b) }); err != nil {
		return Schedule{}, fmt.Errorf("store schedule: %w", err)
	}
	s.arm(sc.ID, sc.Agent, sc.Next)
	return sc, nil
}

// sameTiming reports whether a and b run at the same times.
func sameTiming(a, b *Schedule) bool {
	ta, tb := a.Timing, b.Timing
	atSame := (ta.At == nil) == (tb.At == nil) && (ta.At == nil || ta.At.Equal(*tb.At))
	return atSame && ta.EverySeconds == tb.EverySeconds && ta.Anchor.Equal(tb.Anchor) && ta.Cron == tb.Cron &&
		ta.TZ == tb.TZ && a.ActiveHours == b.ActiveHours
}

// load reads schedule id.
func (s *Service) load(id string) (sc Schedule, ok bool, err error) {
	err = s.db.View(func(tx *storage.Tx) error {
		sc, ok, err = loadSchedule(tx, id)
		return err
	})
	return sc, ok, err
}

// Cancel cancels schedule id and returns it as it now is. With agent set,
// only that agent's schedules are found: another's id is ErrNotFound.
// Cancelling a schedule that is no longer active changes nothing.
func (s *Service) Cancel(ctx context.Context, id, agent string) (Schedule, error) {
	sc, ok, err := s.load(id)
	if err != nil {
		return Schedule{}, err
	}
	if !ok || agent != "" && sc.Agent != agent {
		return Schedule{}, notFound(id)
	}
	if sc.Status != Active {
		return sc, nil
	}
	var out Schedule
	err = s.db.Commit(ctx, func(tx *storage.Tx) error {
		return mutate(tx, id, func(cur *Schedule) {
			if cur.Status == Active {
				cur.Status, cur.Next, cur.Attempt = Cancelled, time.Time{}, 0
			}
			out = *cur
		})
	})
	if err != nil {
		return Schedule{}, fmt.Errorf("cancel schedule: %w", err)
	}
	s.disarm(id)
	return out, nil
}

// CancelProcess cancels the active schedules linked to the background
// process handle, which has ended.
func (s *Service) CancelProcess(ctx context.Context, handle string) error {
	if handle == "" {
		return nil
	}
	var ids []string
	err := s.db.View(func(tx *storage.Tx) error {
		return scanSchedules(tx, func(sc *Schedule) error {
			if sc.ProcessHandle == handle && sc.Status == Active {
				ids = append(ids, sc.ID)
			}
			return nil
		})
	})
	if err != nil || len(ids) == 0 {
		return err
	}
	for _, id := range ids {
		if _, err := s.Cancel(ctx, id, ""); err != nil {
			return err
		}
		s.log.Info("schedule cancelled: its process ended", "schedule_id", id, "process_handle", handle)
	}
	return nil
}

// mutate applies fn to schedule id as the transaction sees it and writes
// it back; an absent or unreadable record is left alone. It fails only
// when the transaction does, so that it never fails a group commit of its
// own accord.
func mutate(tx *storage.Tx, id string, fn func(cur *Schedule)) error {
	cur, ok, err := loadSchedule(tx, id)
	if err != nil || !ok {
		return nil // a damaged record must not fail the others' commit
	}
	fn(&cur)
	b, err := encodeSchedule(&cur)
	if err != nil {
		return nil // as above
	}
	return putSchedule(tx, id, b)
}
