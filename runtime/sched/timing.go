package sched

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Limits on what a schedule may say.
const (
	// MinEverySeconds is lite's shortest interval: a schedule that fires
	// more often would keep a Pi busy for nothing.
	MinEverySeconds = 10
	// MaxPayload bounds a schedule's message or task, in bytes.
	MaxPayload = 16 << 10
	// maxEverySeconds bounds an interval: ten years.
	maxEverySeconds = 10 * 366 * 24 * 3600
	// maxIDLen bounds an id read from outside.
	maxIDLen = 128
	// maxMissedCount is where counting the missed ticks of a cron
	// schedule stops: Missed saturates there.
	maxMissedCount = 10000
	// lateAfter is how long after its due time a run counts as late (a
	// downtime, a suspended machine), though no other tick fell due.
	lateAfter = time.Minute
)

// MinRunGap is the floor between two runs: of one schedule, whatever its
// timing (checked when it is made), and of all one agent's schedules
// together (the service holds a run back until the agent's last one is
// that far behind).
const MinRunGap = MinEverySeconds * time.Second

// timing is a Timing made ready to compute with: its zone, its parsed
// cron expression, its active hours.
type timing struct {
	Timing
	loc  *time.Location
	cron *Cron
	// open, close are the active hours' bounds in minutes since
	// midnight; hasHours is false when any time will do.
	open, close int
	hasHours    bool
}

// prepare checks sc's timing and readies it; def is the zone when the
// timing names none.
func prepare(sc *Schedule, def *time.Location) (*timing, error) {
	t := &timing{Timing: sc.Timing, loc: def}
	n := 0
	if t.At != nil {
		n++
	}
	if t.EverySeconds != 0 {
		n++
		if t.EverySeconds < 1 || t.EverySeconds > maxEverySeconds {
			return nil, fmt.Errorf("every_seconds is %d: give a number of seconds from 1 to %d", t.EverySeconds, int64(maxEverySeconds))
		}
	}
	if t.Cron != "" {
		n++
		c, err := ParseCron(t.Cron)
		if err != nil {
			return nil, err
		}
		t.cron = c
	}
	if n != 1 {
		return nil, fmt.Errorf("a schedule needs exactly one of at, every_seconds or cron, and has %d", n)
	}
	if t.TZ != "" {
		loc, err := time.LoadLocation(t.TZ)
		if err != nil || len(t.TZ) > 64 {
			return nil, fmt.Errorf("time zone %q is unknown: give an IANA name such as Europe/Berlin", t.TZ)
		}
		t.loc = loc
	}
	if t.loc == nil {
		t.loc = time.Local
	}
	if sc.ActiveHours != "" {
		o, c, err := parseHours(sc.ActiveHours)
		if err != nil {
			return nil, err
		}
		t.open, t.close, t.hasHours = o, c, true
	}
	return t, nil
}

// checkFloor refuses a timing whose runs can come closer than MinRunGap:
// an interval under it, or a cron expression whose shortest gap is.
func (t *timing) checkFloor() error {
	if t.EverySeconds > 0 && t.EverySeconds < MinEverySeconds {
		return fmt.Errorf("every_seconds is %d, under the %s floor between a schedule's runs: give %d or more",
			t.EverySeconds, MinRunGap, MinEverySeconds)
	}
	if t.cron == nil {
		return nil
	}
	if gap, ok := t.cron.MinGap(); ok && gap < MinRunGap {
		return fmt.Errorf("cron expression %q runs as little as %s apart, under the %s floor between a schedule's runs: "+
			"space its runs at least %s apart (such as \"*/10\" or one value in the seconds field)", t.Cron, gap, MinRunGap, MinRunGap)
	}
	return nil
}

// parseHours reads "HH:MM-HH:MM" into minutes since midnight.
func parseHours(s string) (open, close int, err error) {
	a, b, ok := strings.Cut(s, "-")
	if ok {
		open, err = parseClock(a)
	}
	if ok && err == nil {
		close, err = parseClock(b)
	}
	if !ok || err != nil || open == close {
		return 0, 0, fmt.Errorf("active hours %q are not a window such as \"08:00-22:00\" (two different times)", s)
	}
	return open, close, nil
}

func parseClock(s string) (int, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(h) > 2 || len(m) != 2 || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return 0, fmt.Errorf("bad clock time %q", s)
	}
	return hh*60 + mm, nil
}

// tick returns the first tick of the timing strictly after t, before
// active hours are applied; zero when there is none (a one-shot whose
// time is not after t, a cron expression that stopped).
func (t *timing) tick(after time.Time) time.Time {
	switch {
	case t.At != nil:
		if t.At.After(after) {
			return *t.At
		}
		return time.Time{}
	case t.EverySeconds > 0:
		p := time.Duration(t.EverySeconds) * time.Second
		k := int64(1)
		if d := after.Sub(t.Anchor); d >= 0 {
			k = int64(d/p) + 1
		}
		return t.Anchor.Add(time.Duration(k) * p)
	default:
		return t.cron.Next(after, t.loc)
	}
}

// next returns when the schedule runs next after `after`: its next tick,
// moved to the next opening of its active hours when it falls outside
// them. Zero: it never runs again.
func (t *timing) next(after time.Time) time.Time {
	return t.window(t.tick(after))
}

// window returns at, or the next opening of the active hours when at is
// outside them.
func (t *timing) window(at time.Time) time.Time {
	if !t.hasHours || at.IsZero() {
		return at
	}
	local := at.In(t.loc)
	m := local.Hour()*60 + local.Minute()
	inside := m >= t.open && m < t.close
	if t.open > t.close { // wraps midnight
		inside = m >= t.open || m < t.close
	}
	if inside {
		return at
	}
	y, mo, d := local.Date()
	open := wallTime(y, mo, d, t.open/60, t.open%60, 0, t.loc)
	if !open.After(at) {
		y, mo, d = time.Date(y, mo, d+1, 12, 0, 0, 0, time.UTC).Date()
		open = wallTime(y, mo, d, t.open/60, t.open%60, 0, t.loc)
	}
	return open
}

// missed counts the ticks that fell due from due to now, both included:
// 1 when the run is on time.
func (t *timing) missed(due, now time.Time) int {
	if t.At != nil || now.Before(due) {
		return 1
	}
	if t.EverySeconds > 0 {
		p := time.Duration(t.EverySeconds) * time.Second
		return int(min(int64(now.Sub(due)/p)+1, 1<<31-1))
	}
	n := 1
	for at := t.cron.Next(due, t.loc); !at.IsZero() && !at.After(now) && n < maxMissedCount; at = t.cron.Next(at, t.loc) {
		n++
	}
	return n
}

// retryPolicy returns sc's retry settings with defaults filled in, and
// whether it retries at all (a schedule without Retry does not, as in
// Agnx).
func retryPolicy(sc *Schedule) (Retry, bool) {
	if sc.Retry == nil || sc.Retry.MaxRetries <= 0 {
		return Retry{}, false
	}
	r := *sc.Retry
	if r.InitialDelayMS <= 0 {
		r.InitialDelayMS = 1000
	}
	if r.MaxDelayMS <= 0 {
		r.MaxDelayMS = 30000
	}
	r.MaxDelayMS = max(r.MaxDelayMS, r.InitialDelayMS)
	return r, true
}

// backoff is the wait before retry number attempt+1 (attempt counts the
// failed tries so far, from 0): initial·2^attempt, capped, ±20 % jitter.
func backoff(r Retry, attempt int) time.Duration {
	d := time.Duration(r.InitialDelayMS) * time.Millisecond
	maxD := time.Duration(r.MaxDelayMS) * time.Millisecond
	for i := 0; i < attempt && d < maxD; i++ {
		d *= 2
	}
	d = min(d, maxD)
	jitter := time.Duration((rand.Float64()*0.4 - 0.2) * float64(d))
	return max(d+jitter, time.Millisecond)
}
