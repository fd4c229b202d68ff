package sched

import (
	"testing"
	"time"
	_ "time/tzdata" // the zones the tests name, whatever the machine has

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func mustCron(t testing.TB, expr string) *Cron {
	t.Helper()
	c, err := ParseCron(expr)
	require.NoError(t, err, expr)
	return c
}

// nexts returns the first n firings after from.
func nexts(c *Cron, from time.Time, loc *time.Location, n int) []string {
	var out []string
	for at := from; len(out) < n; {
		at = c.Next(at, loc)
		if at.IsZero() {
			break
		}
		out = append(out, at.In(loc).Format("2006-01-02 15:04:05 MST"))
	}
	return out
}

func TestParseCron_Dialects(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // a Thursday
	cases := []struct {
		expr string
		want []string
	}{
		{"0 0 9 * * MON-FRI", []string{"2026-01-01 09:00:00 UTC", "2026-01-02 09:00:00 UTC", "2026-01-05 09:00:00 UTC"}},
		{"0 9 * * MON-FRI", []string{"2026-01-01 09:00:00 UTC", "2026-01-02 09:00:00 UTC", "2026-01-05 09:00:00 UTC"}},
		// Rust's numbering: 1 = Sunday, 2 = Monday.
		{"0 0 9 * * 2", []string{"2026-01-05 09:00:00 UTC", "2026-01-12 09:00:00 UTC"}},
		// cron(5)'s: 1 = Monday, 0 and 7 = Sunday.
		{"0 9 * * 1", []string{"2026-01-05 09:00:00 UTC", "2026-01-12 09:00:00 UTC"}},
		{"0 9 * * 7", []string{"2026-01-04 09:00:00 UTC", "2026-01-11 09:00:00 UTC"}},
		{"*/20 * * * * *", []string{"2026-01-01 00:00:20 UTC", "2026-01-01 00:00:40 UTC", "2026-01-01 00:01:00 UTC"}},
		{"0 5/20 10-11 * * ?", []string{"2026-01-01 10:05:00 UTC", "2026-01-01 10:25:00 UTC", "2026-01-01 10:45:00 UTC", "2026-01-01 11:05:00 UTC"}},
		{"0 0 12 1,15 jan-feb * 2026", []string{"2026-01-01 12:00:00 UTC", "2026-01-15 12:00:00 UTC", "2026-02-01 12:00:00 UTC", "2026-02-15 12:00:00 UTC"}},
		{"0 0 0 29 2 *", []string{"2028-02-29 00:00:00 UTC", "2032-02-29 00:00:00 UTC"}},
		// Classic: day of month OR day of week when both are restricted.
		{"0 0 13 * 5", []string{"2026-01-02 00:00:00 UTC", "2026-01-09 00:00:00 UTC", "2026-01-13 00:00:00 UTC"}},
		// Agnx's: both must match (Friday the 13th).
		{"0 0 0 13 * FRI", []string{"2026-02-13 00:00:00 UTC", "2026-03-13 00:00:00 UTC", "2026-11-13 00:00:00 UTC"}},
		{"@hourly", []string{"2026-01-01 01:00:00 UTC", "2026-01-01 02:00:00 UTC"}},
		{"@daily", []string{"2026-01-02 00:00:00 UTC"}},
		{"@weekly", []string{"2026-01-04 00:00:00 UTC"}},
		{"@monthly", []string{"2026-02-01 00:00:00 UTC"}},
		{"@yearly", []string{"2027-01-01 00:00:00 UTC"}},
		{"0 30 8 * * Monday,wednesday", []string{"2026-01-05 08:30:00 UTC", "2026-01-07 08:30:00 UTC"}},
		{"0 0 0 1 1 * 2027-2028", []string{"2027-01-01 00:00:00 UTC", "2028-01-01 00:00:00 UTC"}},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			c := mustCron(t, tc.expr)
			assert.Equal(t, tc.want, nexts(c, from, time.UTC, len(tc.want)))
		})
	}
}

func TestParseCron_Errors(t *testing.T) {
	for _, expr := range []string{
		"", "* * * *", "* * * * * * * *", "60 * * * * *", "* 60 * * * *", "* * 24 * * *", "* * * 0 * *",
		"* * * 32 * *", "* * * * 13 *", "* * * * * 8", "0 0 0 * * 0", "* * * * * * 1969", "* * * * * * 2101",
		"*/0 * * * * *", "5-1 * * * * *", "a * * * * *", "* * * * FOO *", "0 0 0 30 2 *", "0 0 0 31 4,6,9,11 *",
		"1-2-3 * * * * *", "@reboot", "0 0 0 1 1 * 2020-2019", ",,, * * * * *",
	} {
		_, err := ParseCron(expr)
		assert.Error(t, err, expr)
	}
}

func TestCron_NextEnds(t *testing.T) {
	c := mustCron(t, "0 0 0 1 1 * 2030")
	at := c.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.UTC)
	assert.Equal(t, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), at)
	assert.True(t, c.Next(at, time.UTC).IsZero(), "no run after its last year")
}

func TestCron_NextIsStrictlyAfter(t *testing.T) {
	c := mustCron(t, "0 0 9 * * *")
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	assert.Equal(t, at.AddDate(0, 0, 1), c.Next(at, time.UTC))
	assert.Equal(t, at, c.Next(at.Add(-time.Nanosecond), time.UTC))
}

// Spring forward: 02:30 does not exist on that day; it runs once, at the
// first instant after the gap (03:00 new time), as cron(8) runs it.
func TestCron_SpringForward(t *testing.T) {
	for _, tc := range []struct {
		zone string
		day  time.Time
		want []string
	}{
		{"Europe/Berlin", time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC),
			[]string{"2026-03-29 03:00:00 CEST", "2026-03-30 02:30:00 CEST"}},
		{"America/New_York", time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC),
			[]string{"2026-03-08 03:00:00 EDT", "2026-03-09 02:30:00 EDT"}},
	} {
		t.Run(tc.zone, func(t *testing.T) {
			loc := mustZone(t, tc.zone)
			daily := mustCron(t, "0 30 2 * * *")
			assert.Equal(t, append([]string{tc.day.In(loc).Format("2006-01-02") + " 02:30:00 " + zoneAbbr(tc.day, loc)}, tc.want...),
				nexts(daily, tc.day.Add(-24*time.Hour), loc, 3))
			// Every quarter hour: the gap's four times become one run at 03:00.
			q := mustCron(t, "0 */15 * * * *")
			start := c0145(tc.want[0], loc)
			assert.Equal(t, []string{
				start.Add(15 * time.Minute).Format("2006-01-02 15:04:05 MST"),
				start.Add(30 * time.Minute).Format("2006-01-02 15:04:05 MST"),
				start.Add(45 * time.Minute).Format("2006-01-02 15:04:05 MST"),
			}, nexts(q, start, loc, 3))
		})
	}
}

func zoneAbbr(t time.Time, loc *time.Location) string {
	name, _ := t.In(loc).Zone()
	return name
}

// c0145 is 01:45 on the day of the stamp s (which reads "YYYY-MM-DD ...").
func c0145(s string, loc *time.Location) time.Time {
	d, _ := time.ParseInLocation("2006-01-02", s[:10], loc)
	return time.Date(d.Year(), d.Month(), d.Day(), 1, 45, 0, 0, loc)
}

// Fall back: 01:30 (New York) or 02:30 (Berlin) happens twice; it runs
// once, at the first.
func TestCron_FallBack(t *testing.T) {
	for _, tc := range []struct {
		zone, expr string
		from       time.Time
		want       []string
	}{
		{"Europe/Berlin", "0 30 2 * * *", time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC),
			[]string{"2026-10-25 02:30:00 CEST", "2026-10-26 02:30:00 CET"}},
		{"America/New_York", "0 30 1 * * *", time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC),
			[]string{"2026-11-01 01:30:00 EDT", "2026-11-02 01:30:00 EST"}},
	} {
		t.Run(tc.zone, func(t *testing.T) {
			loc := mustZone(t, tc.zone)
			assert.Equal(t, tc.want, nexts(mustCron(t, tc.expr), tc.from, loc, 2))
		})
	}
	// From within the repeated hour's second pass, the time already run
	// is not run again.
	ny := mustZone(t, "America/New_York")
	second := time.Date(2026, 11, 1, 6, 10, 0, 0, time.UTC) // 01:10 EST
	assert.Equal(t, []string{"2026-11-02 01:30:00 EST"}, nexts(mustCron(t, "0 30 1 * * *"), second, ny, 1))
}

func TestCron_NextMonotonicAcrossDST(t *testing.T) {
	c := mustCron(t, "0 */30 * * * *")
	for _, zone := range []string{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe"} {
		loc := mustZone(t, zone)
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for range 2 * 24 * 366 {
			next := c.Next(at, loc)
			require.True(t, next.After(at), "%s: %v after %v", zone, next, at)
			// The autumn hour runs once: at most 30 min + 1 h apart.
			require.LessOrEqual(t, next.Sub(at), 90*time.Minute, "%s: %v after %v", zone, next, at)
			at = next
		}
	}
}

func FuzzCron(f *testing.F) {
	for _, s := range []string{"0 0 9 * * MON-FRI", "*/5 * * * *", "@daily", "0 0 0 29 2 * 2028", "1-5/2,7 * ? * JAN-mar SUN",
		"0 0 0 30 2 *", "* * * * * * *", "59 59 23 31 12 7 2100"} {
		f.Add(s, int64(1767225600))
	}
	berlin := mustZone(f, "Europe/Berlin")
	f.Fuzz(func(t *testing.T, expr string, unix int64) {
		c, err := ParseCron(expr)
		if err != nil {
			return
		}
		after := time.Unix(unix%(1<<34), 0)
		for _, loc := range []*time.Location{time.UTC, berlin} {
			next := c.Next(after, loc)
			if !next.IsZero() && !next.After(after) {
				t.Fatalf("%q: Next(%v) = %v, not after", expr, after, next)
			}
		}
	})
}
