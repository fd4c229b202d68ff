package lite

import (
	"context"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
	"github.com/agnx-lite/agnx-lite/storage"
)

// recordFirer records each run as heartbeatFire does (f.Record in the
// message's transaction) and notes when it fired.
type recordFirer struct {
	st    *storage.Store
	mu    sync.Mutex
	fired []time.Time
}

func (r *recordFirer) Fire(_ context.Context, f sched.Firing) error {
	f.SetSession("s1")
	if err := r.st.Update(f.Record); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fired = append(r.fired, time.Now())
	return nil
}

// A heartbeat's schedule, run by the scheduler over two fake days, fires
// every 45 minutes inside its active hours and never outside them, in the
// scheduler's zone (a run held back fires at the window's opening).
func TestHeartbeatSchedule_ActiveHours(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		st, err := storage.Open(filepath.Join(dir, "agnx.db"), &storage.Options{NoSync: true})
		require.NoError(t, err)
		defer st.Close()
		rf := &recordFirer{st: st}
		svc := sched.New(sched.Options{DB: sched.FromStore(st), Firer: rf, Location: berlin})
		hb := &agents.Heartbeat{Every: 45 * time.Minute, ActiveHours: "08:00-22:00"}
		sc, err := svc.Put(context.Background(), hbSchedule("beat", hb))
		require.NoError(t, err)
		assert.Equal(t, sched.Active, sc.Status)

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- svc.Run(ctx) }()
		time.Sleep(48 * time.Hour)
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)

		rf.mu.Lock()
		defer rf.mu.Unlock()
		require.NotEmpty(t, rf.fired)
		perDay := map[string]int{}
		for i, at := range rf.fired {
			local := at.In(berlin)
			mins := local.Hour()*60 + local.Minute()
			assert.True(t, mins >= 8*60 && mins < 22*60, "fired at %s, outside 08:00-22:00", local)
			// The run the window's opening held back fires at 08:00; the
			// ticks then go on from the schedule's anchor.
			if prev := rf.fired[max(i-1, 0)].In(berlin); i > 0 && !(prev.Hour() == 8 && prev.Minute() == 0) {
				assert.GreaterOrEqual(t, at.Sub(prev), 45*time.Minute, "fired twice within 45m at %s", local)
			}
			perDay[local.Format(time.DateOnly)]++
		}
		for day, n := range perDay {
			assert.LessOrEqual(t, n, 19, "%s: 14 hours hold at most 19 runs every 45m", day)
		}
		t.Logf("fired %d times, first %s, last %s", len(rf.fired), rf.fired[0].In(berlin), rf.fired[len(rf.fired)-1].In(berlin))
		// A whole day inside the two: 14 hours of 45-minute ticks.
		assert.GreaterOrEqual(t, len(rf.fired), 18)

		_, runs, err := svc.Get(context.Background(), "hb_beat")
		require.NoError(t, err)
		require.NotEmpty(t, runs)
		assert.Equal(t, "s1", runs[0].SessionID, "recorded with the session the message went to")
	})
}

// With the daemon's own scheduler: the heartbeat registered at 23:10 runs
// next at 08:00 the next morning, and a restart keeps that run.
func TestHeartbeats_RealScheduler(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	now := time.Date(2026, 11, 23, 23, 10, 0, 0, berlin)
	cfg := crashConfig(t.TempDir())
	cfg.Scheduler.Timezone = "Europe/Berlin"
	writeHBAgent(t, cfg, "beat", "  heartbeat: {every: 45m, active_hours: \"08:00-22:00\"}\n", nil)
	writeHBAgent(t, cfg, "quiet", "", nil)
	var sc sched.Schedule
	for range 2 {
		app, err := Open(cfg, &Options{Clock: func() time.Time { return now }})
		require.NoError(t, err)
		app.hb.start()
		app.hb.idle()
		list, err := app.Schedules().List(context.Background(), "", false)
		require.NoError(t, err)
		require.Len(t, list, 1)
		if sc.ID != "" {
			assert.Equal(t, sc.Next, list[0].Next, "the restart left the run where it was")
		}
		sc = list[0]
		require.NoError(t, app.Close())
		now = now.Add(time.Minute)
	}
	assert.Equal(t, "hb_beat", sc.ID)
	assert.Equal(t, time.Date(2026, 11, 24, 8, 0, 0, 0, berlin), sc.Next.In(berlin))
}

// BenchmarkHeartbeats_Wanted is the start-up's look for heartbeats over
// 100 agent folders: none with a heartbeat (a stat and a read of
// agent.yaml each), or all of them (each agent loaded too).
func BenchmarkHeartbeats_Wanted(b *testing.B) {
	for _, with := range []bool{false, true} {
		b.Run(map[bool]string{false: "none", true: "all"}[with], func(b *testing.B) {
			cfg := crashConfig(b.TempDir())
			for i := range 100 {
				name := "a" + string(rune('a'+i/26)) + string(rune('a'+i%26))
				files := map[string]string{"SOUL.md": "You are helpful."}
				if with {
					files[agents.HeartbeatFile] = "Anything due?"
				}
				writeHBAgent(b, cfg, name, "", files)
			}
			log := slog.New(slog.DiscardHandler)
			h := &heartbeats{agentsDir: cfg.AgentsDir, agents: agentcache.NewStandalone(cfg, log), log: log}
			b.ReportAllocs()
			for b.Loop() {
				want, _, err := h.wanted(true, nil)
				if err != nil || len(want) != map[bool]int{false: 0, true: 100}[with] {
					b.Fatal(err, len(want))
				}
			}
		})
	}
}
