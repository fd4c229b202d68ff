package sched

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
)

func TestService_At(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		h.start()
		ctx := context.Background()
		at := time.Now().Add(time.Hour)
		sc, err := h.s.Create(ctx, message(Timing{At: &at}))
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(sc.ID, IDPrefix))
		assert.Equal(t, Active, sc.Status)
		assert.True(t, sc.Next.Equal(at))

		sleep(time.Hour - time.Second)
		assert.Empty(t, h.firer.runs(), "not before its time")
		sleep(time.Second)
		runs := h.firer.runs()
		require.Len(t, runs, 1)
		assert.True(t, runs[0].Due.Equal(at))
		assert.False(t, runs[0].Late)

		sleep(24 * time.Hour)
		assert.Len(t, h.firer.runs(), 1, "a one-shot fires once")
		got, log := h.get(sc.ID)
		assert.Equal(t, Completed, got.Status)
		assert.True(t, got.Next.IsZero())
		assert.Equal(t, 1, got.Runs)
		require.Len(t, log, 1)
		assert.Equal(t, RunFired, log[0].Outcome)
		assert.Equal(t, "sess_"+sc.ID, log[0].SessionID, "SetSession reaches the record")
	})
}

func TestService_Every(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		h.start()
		start := time.Now()
		sc, err := h.s.Create(context.Background(), message(Timing{EverySeconds: 600}))
		require.NoError(t, err)
		assert.True(t, sc.Timing.Anchor.Equal(start))
		sleep(30*time.Minute + time.Second)
		runs := h.firer.runs()
		require.Len(t, runs, 3)
		for i, r := range runs {
			assert.True(t, r.Due.Equal(start.Add(time.Duration(i+1)*10*time.Minute)), "run %d due %v", i, r.Due)
			assert.False(t, r.Late)
		}
		got, _ := h.get(sc.ID)
		assert.True(t, got.Next.Equal(start.Add(40*time.Minute)))
		assert.Equal(t, 3, got.Runs)
	})
}

// A daily cron schedule across both daylight-saving changes of a year:
// the spring day's skipped 02:30 runs once at 03:00, the autumn day's
// doubled 01:30 / 02:30 runs once.
func TestService_CronAcrossDST(t *testing.T) {
	for _, tc := range []struct {
		zone, expr     string
		spring, autumn string // the run's local time those days
	}{
		{"Europe/Berlin", "0 30 2 * * *", "2000-03-26 03:00:00 CEST", "2000-10-29 02:30:00 CEST"},
		{"America/New_York", "0 30 2 * * *", "2000-04-02 03:00:00 EDT", "2000-10-29 02:30:00 EST"},
		{"America/New_York", "30 1 * * *", "2000-04-02 01:30:00 EST", "2000-10-29 01:30:00 EDT"},
	} {
		t.Run(tc.zone+" "+tc.expr, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				loc := mustZone(t, tc.zone)
				h := newHarness(t, loc)
				h.s.maxWait = 24 * time.Hour // a year of minutes would only be slow
				h.start()
				_, err := h.s.Create(context.Background(), message(Timing{Cron: tc.expr}))
				require.NoError(t, err)
				sleep(366 * 24 * time.Hour)
				runs := h.firer.runs()
				assert.Len(t, runs, 366, "once a day, 2000 being a leap year")
				days := map[string]int{}
				var seen []string
				for _, r := range runs {
					local := r.Due.In(loc)
					days[local.Format("2006-01-02")]++
					seen = append(seen, local.Format("2006-01-02 15:04:05 MST"))
				}
				for d, n := range days {
					assert.Equal(t, 1, n, "day %s", d)
				}
				assert.Contains(t, seen, tc.spring)
				assert.Contains(t, seen, tc.autumn)
			})
		})
	}
}

func TestService_DowntimeOverOneShot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		h.start()
		at := time.Now().Add(time.Hour)
		sc, err := h.s.Create(context.Background(), message(Timing{At: &at}))
		require.NoError(t, err)
		h.stop()
		sleep(5 * time.Hour)
		assert.Empty(t, h.firer.runs())

		h.s = h.newService()
		h.start()
		runs := h.firer.runs()
		require.Len(t, runs, 1, "a one-shot whose time passed fires once at start")
		assert.True(t, runs[0].Late)
		assert.Equal(t, 1, runs[0].Missed)
		assert.True(t, runs[0].Due.Equal(at))
		got, _ := h.get(sc.ID)
		assert.Equal(t, Completed, got.Status)
		require.Len(t, h.logs.records("schedule runs missed while down: running once, late"), 1)

		h.restart()
		assert.Len(t, h.firer.runs(), 1, "and never again")
	})
}

func TestService_DowntimeOverTenTicks(t *testing.T) {
	for _, policy := range []string{"", MissedSkip} {
		t.Run("missed="+policy, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, time.UTC)
				h.start()
				start := time.Now()
				in := message(Timing{EverySeconds: 600})
				in.Missed = policy
				sc, err := h.s.Create(context.Background(), in)
				require.NoError(t, err)
				sleep(10 * time.Minute)
				require.Len(t, h.firer.runs(), 1)

				h.stop()
				sleep(100 * time.Minute) // ticks at 20, 30, ... 110 minutes: ten
				h.s = h.newService()
				h.start()

				got, log := h.get(sc.ID)
				assert.True(t, got.Next.Equal(start.Add(120*time.Minute)), "the next run is the first tick after now: %v", got.Next)
				require.Len(t, log, 2)
				last := log[0]
				assert.True(t, last.Due.Equal(start.Add(20*time.Minute)))
				assert.True(t, last.Late)
				assert.Equal(t, 10, last.Missed)
				if policy == MissedSkip {
					assert.Len(t, h.firer.runs(), 1, "skip fires none of them")
					assert.Equal(t, RunSkipped, last.Outcome)
					assert.Equal(t, "it was due while the daemon was down, and its missed policy is skip", last.Reason)
					assert.Equal(t, map[string]uint64{SkipMissed: 1}, h.s.Counts().Skipped)
					assert.Len(t, h.logs.records("schedule runs missed while down: skipped, as its policy says"), 1)
				} else {
					runs := h.firer.runs()
					require.Len(t, runs, 2, "run_once fires once for all of them")
					assert.Equal(t, 10, runs[1].Missed)
					assert.Equal(t, RunFired, last.Outcome)
					recs := h.logs.records("schedule runs missed while down: running once, late")
					require.Len(t, recs, 1)
					assert.EqualValues(t, 10, recs[0]["missed"])
					assert.Equal(t, sc.ID, recs[0]["schedule_id"])
				}
				sleep(10 * time.Minute)
				assert.Len(t, h.firer.runs(), map[string]int{"": 3, MissedSkip: 2}[policy], "and it goes on")
			})
		})
	}
}

func TestService_NeverFiresTwiceAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		h.s.workers = 4
		h.start()
		hold := make(chan struct{})
		h.firer.hold = hold
		sc, err := h.s.Create(context.Background(), message(Timing{EverySeconds: 10}))
		require.NoError(t, err)
		sleep(time.Minute) // six ticks pass while the first firing waits
		close(hold)
		synctest.Wait()
		h.firer.mu.Lock()
		most := h.firer.most
		h.firer.mu.Unlock()
		assert.Equal(t, 1, most)
		got, _ := h.get(sc.ID)
		assert.True(t, got.Next.After(time.Now()))
	})
}

func TestService_WithoutRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		ctx := context.Background()
		a, err := h.s.Create(ctx, message(Timing{EverySeconds: 3600}))
		require.NoError(t, err)
		at := time.Now().Add(time.Minute)
		b, err := h.s.Create(ctx, message(Timing{At: &at}))
		require.NoError(t, err)
		other := message(Timing{Cron: "@daily"})
		other.Agent = "b"
		c, err := h.s.Create(ctx, other)
		require.NoError(t, err)

		list, err := h.s.List(ctx, "a", false)
		require.NoError(t, err)
		require.Len(t, list, 2)
		assert.Equal(t, b.ID, list[0].ID, "soonest first")
		all, err := h.s.List(ctx, "", false)
		require.NoError(t, err)
		assert.Len(t, all, 3)

		_, err = h.s.Cancel(ctx, c.ID, "a")
		assert.ErrorIs(t, err, ErrNotFound, "another agent's schedule is not found")
		got, err := h.s.Cancel(ctx, a.ID, "a")
		require.NoError(t, err)
		assert.Equal(t, Cancelled, got.Status)
		list, err = h.s.List(ctx, "a", false)
		require.NoError(t, err)
		assert.Len(t, list, 1)
		list, err = h.s.List(ctx, "a", true)
		require.NoError(t, err)
		assert.Len(t, list, 2)
		active, next := h.s.Stats()
		assert.Equal(t, 2, active)
		assert.True(t, next.Equal(at))
		_, _, err = h.s.Get(ctx, "sched_nope")
		assert.ErrorIs(t, err, ErrNotFound)

		// Run picks up what was made while it was stopped.
		h.start()
		sleep(time.Minute)
		assert.Len(t, h.firer.runs(), 1)
		active, _ = h.s.Stats()
		assert.Equal(t, 1, active)
	})
}

func TestService_Put(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		h.start()
		ctx := context.Background()
		hb := Schedule{ID: "hb_a", Agent: "a", Timing: Timing{EverySeconds: 1800}, Payload: Payload{Kind: KindHeartbeat}, ActiveHours: "08:00-22:00"}
		first, err := h.s.Put(ctx, hb)
		require.NoError(t, err)
		// 00:00 is outside the window: the first run waits for 08:00.
		assert.True(t, first.Next.Equal(time.Date(2000, 1, 1, 8, 0, 0, 0, time.UTC)), "%v", first.Next)
		sleep(9 * time.Hour)
		assert.Len(t, h.firer.runs(), 3, "08:00, 08:30, 09:00")

		h.restart()
		again, err := h.s.Put(ctx, hb)
		require.NoError(t, err)
		assert.True(t, again.Next.Equal(first.Next.Add(90*time.Minute)), "the same timing keeps its next run: %v", again.Next)
		assert.Equal(t, 3, again.Runs)

		hb.Timing.EverySeconds = 3600
		moved, err := h.s.Put(ctx, hb)
		require.NoError(t, err)
		assert.True(t, moved.Next.Equal(time.Now().Add(time.Hour)), "a new timing starts afresh: %v", moved.Next)
		assert.Equal(t, 3, moved.Runs)
		sleep(14 * time.Hour) // 10:00 to 24:00: runs up to 21:00
		assert.Len(t, h.firer.runs(), 3+12)
	})
}

func TestService_Validation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		ctx := context.Background()
		past := time.Now().Add(-time.Second)
		bad := []Schedule{
			message(Timing{}),
			message(Timing{At: &past}),
			message(Timing{EverySeconds: 60, Cron: "@daily"}),
			message(Timing{Cron: "0 0 0 30 2 *"}),
			message(Timing{Cron: "0 0 0 1 1 * 1999"}),
			message(Timing{Cron: "@daily", TZ: "Mars/Olympus"}),
			{Agent: "a", Timing: Timing{EverySeconds: 60}, Payload: Payload{Kind: KindMessage, Text: "x"}},
			{Agent: "a", Destination: Destination{SessionID: "s"}, Timing: Timing{EverySeconds: 60}, Payload: Payload{Kind: "email", Text: "x"}},
			{Agent: "a", Destination: Destination{SessionID: "s"}, Timing: Timing{EverySeconds: 60}, Payload: Payload{Kind: KindTask, Text: strings.Repeat("x", MaxPayload+1)}},
			{Agent: "a", Destination: Destination{SessionID: "s"}, Timing: Timing{EverySeconds: 60}, Payload: Payload{Kind: KindTask, Text: "x"}, Missed: "sometimes"},
			{Agent: "a", Destination: Destination{SessionID: "s"}, Timing: Timing{EverySeconds: 60}, Payload: Payload{Kind: KindTask, Text: "x"}, ActiveHours: "8-22"},
		}
		for i, sc := range bad {
			_, err := h.s.Create(ctx, sc)
			assert.Error(t, err, "case %d", i)
		}
		scs, err := h.s.List(ctx, "", true)
		require.NoError(t, err)
		assert.Empty(t, scs)
	})
}

func TestService_PerAgentLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		ctx := context.Background()
		_, err := h.s.Create(ctx, message(Timing{EverySeconds: 3600}))
		require.NoError(t, err)
		// The rest written at once: a thousand Creates would only be slow.
		require.NoError(t, h.st.Update(func(tx *storage.Tx) error {
			for i := 1; i < MaxActivePerAgent; i++ {
				sc := message(Timing{EverySeconds: 3600})
				sc.ID, sc.Status, sc.Next = fmt.Sprintf("sched_%04d", i), Active, time.Now().Add(time.Hour)
				b, err := encodeSchedule(&sc)
				if err == nil {
					err = putSchedule(tx, sc.ID, b)
				}
				if err != nil {
					return err
				}
			}
			return nil
		}))
		_, err = h.s.Create(ctx, message(Timing{EverySeconds: 3600}))
		require.ErrorContains(t, err, "cancel some first")
		other := message(Timing{EverySeconds: 3600})
		other.Agent = "b"
		_, err = h.s.Create(ctx, other)
		require.NoError(t, err)
	})
}

func TestService_CancelProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		h.start()
		ctx := context.Background()
		in := message(Timing{EverySeconds: 60})
		in.ProcessHandle = "proc_1"
		sc, err := h.s.Create(ctx, in)
		require.NoError(t, err)
		sleep(time.Minute)
		require.Len(t, h.firer.runs(), 1)
		require.NoError(t, h.s.CancelProcess(ctx, "proc_1"))
		got, _ := h.get(sc.ID)
		assert.Equal(t, Cancelled, got.Status)
		sleep(time.Hour)
		assert.Len(t, h.firer.runs(), 1)
	})
}
