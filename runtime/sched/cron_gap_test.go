package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// observedGap is the shortest gap between consecutive runs among the
// first n after from, in UTC; false when fewer than two came.
func observedGap(c *Cron, from time.Time, n int) (time.Duration, bool) {
	var best time.Duration
	seen := false
	prev := c.Next(from, time.UTC)
	for i := 0; i < n && !prev.IsZero(); i++ {
		at := c.Next(prev, time.UTC)
		if at.IsZero() {
			break
		}
		if g := at.Sub(prev); !seen || g < best {
			best, seen = g, true
		}
		prev = at
	}
	return best, seen
}

// MinGap is exact: it names the shortest gap however rarely it occurs
// (once a year at the turn of the year, between the Friday the 13ths of
// February and March of a common year), and the runs around it, stepped through with
// Next, show that very gap.
func TestCron_MinGap(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		expr string
		want time.Duration
		// from and n: where the runs around the shortest gap are, to
		// step through them (n 0: too far apart to step through).
		from time.Time
		n    int
	}{
		{"* * * * * *", time.Second, time.Time{}, 0},
		{"*/10 * * * * *", 10 * time.Second, time.Time{}, 0},
		{"0,5 * * * * *", 5 * time.Second, time.Time{}, 0},
		{"0,55 * * * * *", 5 * time.Second, time.Time{}, 0},                          // 00:55 to 01:00
		{"50 0,1 * * * *", 60 * time.Second, time.Time{}, 0},                         // 00:50 to 01:50
		{"0,59 0,59 * * * *", time.Second, time.Time{}, 0},                           // 59:59 to the next hour's 00:00
		{"30 59 0,1 * * *", time.Hour, time.Time{}, 0},                               // 00:59:30 to 01:59:30
		{"0 0 9-17 * * MON-FRI", time.Hour, time.Time{}, 0},                          // 16:00 to 17:00
		{"0 0 9,17 * * MON-FRI", 8 * time.Hour, time.Time{}, 0},                      // 09:00 to 17:00
		{"0,59 0,59 0,23 1,31 1,12 *", time.Second, dec30(), 80},                     // 23:59:59 on 31 December to 00:00:00 on 1 January
		{"59 59 23 31 12 *", 365 * day, time.Time{}, 0},                              // once a year
		{"0 0 0 1,31 1,12 *", day, dec30(), 4},                                       // 31 December to 1 January
		{"0 0 0 13 * FRI", 28 * day, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 3}, // February to March 2026
		{"0 0 13 * 5", day, time.Date(2026, 6, 11, 0, 0, 0, 0, time.UTC), 3},         // classic: Friday 12 June to Saturday 13 June 2026
		{"0 0 0 29 2 *", 1461 * day, time.Time{}, 0},                                 // leap days, 2100 none
		{"*/5 * * * *", 5 * time.Minute, time.Time{}, 0},                             // classic five fields
		{"@hourly", time.Hour, time.Time{}, 0},
		{"@weekly", 7 * day, time.Time{}, 0},
		{"0 0 0 1 1 * 2027-2028", 365 * day, time.Time{}, 0},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			c := mustCron(t, tc.expr)
			got, ok := c.MinGap()
			require.True(t, ok)
			assert.Equal(t, tc.want, got)
			from, n := tc.from, tc.n
			if from.IsZero() && tc.want < 2*day {
				from, n = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), int(3*day/tc.want)+2
			}
			if n > 0 {
				seen, ok := observedGap(c, from, min(n, 20000))
				require.True(t, ok)
				assert.Equal(t, tc.want, seen, "the runs stepped through")
			}
		})
	}
	for _, expr := range []string{"0 0 0 1 1 * 2030", "30 15 10 24 12 * 2099"} {
		_, ok := mustCron(t, expr).MinGap()
		assert.False(t, ok, "%s runs once", expr)
	}
}

func dec30() time.Time { return time.Date(2026, 12, 30, 0, 0, 0, 0, time.UTC) }

// FuzzCron_MinGap: no two consecutive runs of any expression come closer
// than MinGap says, and one that says it runs once does not run twice.
func FuzzCron_MinGap(f *testing.F) {
	for _, s := range []string{"* * * * * *", "0,55 * * * * *", "0,59 0,59 0,23 1,31 1,12 *", "0 0 0 13 * FRI",
		"0 0 13 * 5", "*/7 */13 1-3 * * 2,4", "@daily", "0 0 0 1 1 * 2030", "0 0 0 29 2 * 2096-2104"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		c, err := ParseCron(expr)
		if err != nil {
			return
		}
		gap, ok := c.MinGap()
		seen, twice := observedGap(c, time.Date(2026, 12, 30, 0, 0, 0, 0, time.UTC), 300)
		if !ok {
			assert.False(t, twice, "%q: MinGap says it runs once", expr)
			return
		}
		if twice {
			assert.GreaterOrEqual(t, seen, gap, "%q", expr)
		}
	})
}
