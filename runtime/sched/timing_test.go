package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustTiming(t *testing.T, sc Schedule) *timing {
	t.Helper()
	tm, err := prepare(&sc, time.UTC)
	require.NoError(t, err)
	return tm
}

func TestTiming_Every(t *testing.T) {
	anchor := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tm := mustTiming(t, Schedule{Timing: Timing{EverySeconds: 600, Anchor: anchor}})
	assert.Equal(t, anchor.Add(10*time.Minute), tm.next(anchor.Add(-time.Hour)), "ticks start one interval after the anchor")
	assert.Equal(t, anchor.Add(10*time.Minute), tm.next(anchor))
	assert.Equal(t, anchor.Add(20*time.Minute), tm.next(anchor.Add(10*time.Minute)))
	assert.Equal(t, anchor.Add(20*time.Minute), tm.next(anchor.Add(19*time.Minute)))
	assert.Equal(t, 1, tm.missed(anchor.Add(10*time.Minute), anchor.Add(19*time.Minute)))
	assert.Equal(t, 10, tm.missed(anchor.Add(10*time.Minute), anchor.Add(100*time.Minute)))
}

func TestTiming_CronMissed(t *testing.T) {
	tm := mustTiming(t, Schedule{Timing: Timing{Cron: "0 0 * * * *"}})
	due := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	assert.Equal(t, 1, tm.missed(due, due))
	assert.Equal(t, 10, tm.missed(due, due.Add(9*time.Hour+30*time.Minute)))
	every := mustTiming(t, Schedule{Timing: Timing{Cron: "* * * * * *"}})
	assert.Equal(t, maxMissedCount, every.missed(due, due.Add(24*time.Hour)), "counting stops")
}

func TestTiming_ActiveHours(t *testing.T) {
	day := func(h, m int) time.Time { return time.Date(2026, 6, 1, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		hours    string
		at, want time.Time
	}{
		{"08:00-22:00", day(9, 0), day(9, 0)},
		{"08:00-22:00", day(7, 59), day(8, 0)},
		{"08:00-22:00", day(22, 0), day(8, 0).AddDate(0, 0, 1)},
		{"22:00-06:00", day(23, 30), day(23, 30)},
		{"22:00-06:00", day(5, 59), day(5, 59)},
		{"22:00-06:00", day(6, 0), day(22, 0)},
		{"22:00-06:00", day(12, 0), day(22, 0)},
	} {
		tm := mustTiming(t, Schedule{Timing: Timing{Cron: "@hourly"}, ActiveHours: tc.hours})
		assert.Equal(t, tc.want, tm.window(tc.at), "%s at %v", tc.hours, tc.at)
	}
	for _, bad := range []string{"8-22", "08:00", "08:00-08:00", "24:00-01:00", "08:60-09:00", "x:00-09:00", "08:00-09:0"} {
		_, err := prepare(&Schedule{Timing: Timing{Cron: "@hourly"}, ActiveHours: bad}, time.UTC)
		assert.Error(t, err, bad)
	}
}

// The window opens at a wall-clock time that the spring-forward day
// skips: it opens at the first instant after the gap.
func TestTiming_ActiveHoursAcrossDST(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	sc := Schedule{Timing: Timing{Cron: "@hourly", TZ: "Europe/Berlin"}, ActiveHours: "02:30-04:00"}
	tm, err := prepare(&sc, time.UTC)
	require.NoError(t, err)
	at := time.Date(2026, 3, 29, 1, 0, 0, 0, berlin)
	assert.Equal(t, time.Date(2026, 3, 29, 3, 0, 0, 0, berlin), tm.window(at))
}

func TestBackoff(t *testing.T) {
	r := Retry{MaxRetries: 5, InitialDelayMS: 1000, MaxDelayMS: 30000}
	for attempt, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second} {
		for range 50 {
			d := backoff(r, attempt)
			assert.GreaterOrEqual(t, d, want*8/10, "attempt %d", attempt)
			assert.LessOrEqual(t, d, want*12/10, "attempt %d", attempt)
		}
	}
	pol, ok := retryPolicy(&Schedule{Retry: &Retry{MaxRetries: 2}})
	assert.True(t, ok)
	assert.Equal(t, Retry{MaxRetries: 2, InitialDelayMS: 1000, MaxDelayMS: 30000}, pol)
	_, ok = retryPolicy(&Schedule{})
	assert.False(t, ok)
}

func FuzzTimingInputs(f *testing.F) {
	for _, s := range []string{"08:00-22:00", "22:00-06:00", "2026-01-30T16:00:00Z", "2026-01-30T16:00", "x", "23:59-00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if o, c, err := parseHours(s); err == nil {
			require.True(t, o >= 0 && o < 24*60 && c >= 0 && c < 24*60 && o != c)
			tm := &timing{loc: time.UTC, open: o, close: c, hasHours: true}
			at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
			w := tm.window(at)
			require.False(t, w.Before(at))
			require.Less(t, w.Sub(at), 25*time.Hour)
		}
		_, _ = parseAt(s, time.UTC)
	})
}

func TestOrigin(t *testing.T) {
	id, ok := FromOrigin(Origin("sched_1"))
	assert.True(t, ok)
	assert.Equal(t, "sched_1", id)
	for _, o := range []string{"", "schedule:", "heartbeat", "webhook:gh"} {
		_, ok := FromOrigin(o)
		assert.False(t, ok, o)
	}
	assert.Equal(t, "[Scheduled Task]\n\nsum up\n\n(This is an automated task. Send the result to this chat.)", TaskMessage("sum up"))
}
