package sched

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A crash before the run was recorded: it runs again after the restart.
// A crash after: it never runs again.
func TestService_CrashSemantics(t *testing.T) {
	t.Run("before record", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, time.UTC)
			h.start()
			h.firer.hold = make(chan struct{}) // Fire waits: the stop below is the crash
			at := time.Now().Add(time.Minute)
			sc, err := h.s.Create(context.Background(), message(Timing{At: &at}))
			require.NoError(t, err)
			sleep(time.Minute)
			h.stop() // Fire returns with the context's error: nothing stored
			_, log := h.get(sc.ID)
			assert.Empty(t, log)
			assert.Empty(t, h.firer.runs())

			h.firer.hold = nil
			h.s = h.newService()
			h.start()
			require.Len(t, h.firer.runs(), 1, "not recorded: it runs once more")
			got, log := h.get(sc.ID)
			assert.Equal(t, Completed, got.Status)
			assert.Len(t, log, 1)
		})
	})
	t.Run("after record", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, time.UTC)
			h.start()
			in := message(Timing{EverySeconds: 3600})
			sc, err := h.s.Create(context.Background(), in)
			require.NoError(t, err)
			sleep(time.Hour)
			require.Len(t, h.firer.runs(), 1)
			h.restart() // the run was committed with its message
			sleep(time.Hour - time.Second)
			assert.Len(t, h.firer.runs(), 1, "a recorded run never runs again")
			sleep(time.Second)
			runs := h.firer.runs()
			require.Len(t, runs, 2)
			assert.True(t, runs[1].Due.Equal(sc.Next.Add(time.Hour)))
		})
	})
}

func TestService_FailingRunRetriesAndGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		h.start()
		var (
			mu    sync.Mutex
			tries []time.Time
		)
		h.firer.setBefore(func(Firing) error {
			mu.Lock()
			defer mu.Unlock()
			tries = append(tries, time.Now())
			return errBoom
		})
		in := message(Timing{EverySeconds: 3600})
		in.Retry = &Retry{MaxRetries: 3, InitialDelayMS: 10000, MaxDelayMS: 60000}
		sc, err := h.s.Create(context.Background(), in)
		require.NoError(t, err)
		sleep(time.Hour + 2*time.Minute)
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, tries, 4, "the run and its 3 retries")
		// The first retry, jittered to as little as 8 s, is held to
		// MinRunGap after the run.
		for i, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
			gap := tries[i+1].Sub(tries[i])
			assert.InDelta(t, float64(want), float64(gap), float64(want)/5+float64(time.Millisecond), "retry %d after %v", i+1, gap)
		}
		got, log := h.get(sc.ID)
		assert.Equal(t, Active, got.Status, "a failed run never stops a recurring schedule")
		assert.True(t, got.Next.Equal(sc.Next.Add(time.Hour)), "it goes on with its next tick: %v", got.Next)
		assert.Equal(t, 1, got.Failures)
		require.Len(t, log, 4)
		assert.Equal(t, RunFailed, log[0].Outcome)
		assert.Equal(t, "boom", log[0].Error)
		for _, r := range log[1:] {
			assert.Equal(t, RunRetrying, r.Outcome)
		}
		assert.NotEmpty(t, h.logs.records("schedule run failed"))

		h.firer.setBefore(nil)
		sleep(time.Hour)
		assert.Len(t, h.firer.runs(), 1, "the next tick runs")
	})
}

func TestService_OneShotFailsForGood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		h.start()
		h.firer.setBefore(func(Firing) error { return errBoom })
		at := time.Now().Add(time.Minute)
		sc, err := h.s.Create(context.Background(), message(Timing{At: &at}))
		require.NoError(t, err)
		sleep(time.Hour)
		got, log := h.get(sc.ID)
		assert.Equal(t, Completed, got.Status)
		require.Len(t, log, 1, "no Retry: no retries, as in Agnx")
		assert.Equal(t, RunFailed, log[0].Outcome)
	})
}

// A task's turn that fails is reported; the run is retried with its
// attempt counted, and its outcome logged.
func TestService_ReportRetriesTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		h.start()
		ctx := context.Background()
		at := time.Now().Add(time.Minute)
		in := message(Timing{At: &at})
		in.Payload = Payload{Kind: KindTask, Text: "check the backup"}
		in.Retry = &Retry{MaxRetries: 1, InitialDelayMS: 10000, MaxDelayMS: 10000}
		sc, err := h.s.Create(ctx, in)
		require.NoError(t, err)
		sleep(time.Minute)
		require.Len(t, h.firer.runs(), 1)
		require.NoError(t, h.s.Report(ctx, sc.ID, false, "model unreachable"))
		got, log := h.get(sc.ID)
		assert.Equal(t, Active, got.Status, "a one-shot comes back for its retry")
		assert.Equal(t, 1, got.Attempt)
		assert.Equal(t, RunRetrying, log[0].Outcome)
		assert.Equal(t, "model unreachable", log[0].Error)
		assert.Equal(t, "sess_"+sc.ID, log[0].SessionID)

		sleep(12 * time.Second)
		runs := h.firer.runs()
		require.Len(t, runs, 2)
		assert.Equal(t, 1, runs[1].Attempt)
		require.NoError(t, h.s.Report(ctx, sc.ID, true, ""))
		require.NoError(t, h.s.Report(ctx, sc.ID, false, "late report"), "a second report changes nothing")
		got, log = h.get(sc.ID)
		assert.Equal(t, Completed, got.Status)
		assert.Equal(t, RunOK, log[0].Outcome)
		assert.Equal(t, RunRetrying, log[1].Outcome)
		assert.ErrorIs(t, h.s.Report(ctx, "sched_nope", true, ""), ErrNotFound)
	})
}

func TestService_CancelWhileFiring(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		hold := make(chan struct{})
		h.firer.hold = hold
		h.start()
		ctx := context.Background()
		sc, err := h.s.Create(ctx, message(Timing{EverySeconds: 60}))
		require.NoError(t, err)
		sleep(time.Minute) // the firing waits
		_, err = h.s.Cancel(ctx, sc.ID, "a")
		require.NoError(t, err)
		close(hold)
		synctest.Wait()
		got, log := h.get(sc.ID)
		assert.Equal(t, Cancelled, got.Status, "the run's record does not undo the cancel")
		assert.Equal(t, 1, got.Runs)
		assert.Len(t, log, 1)
		sleep(time.Hour)
		assert.Len(t, h.firer.runs(), 1)
	})
}

// noRecord is a broken Firer: it says it stored the run and did not.
type noRecord struct {
	mu sync.Mutex
	n  int
}

func (f *noRecord) Fire(context.Context, Firing) error {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	return nil
}

func TestService_FirerThatDoesNotRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		broken := &noRecord{}
		h.s = New(Options{DB: h.db, Firer: broken, Logger: h.s.log})
		h.start()
		at := time.Now().Add(time.Minute)
		_, err := h.s.Create(context.Background(), message(Timing{At: &at}))
		require.NoError(t, err)
		sleep(time.Minute + 30*time.Second)
		broken.mu.Lock()
		n := broken.n
		broken.mu.Unlock()
		assert.Equal(t, 1, n, "not fired again at once")
		assert.Len(t, h.logs.records("schedule fired but not recorded: check the Firer runs Firing.Record"), 1)
	})
}

func TestService_RunNeedsFirer(t *testing.T) {
	assert.Error(t, New(Options{}).Run(context.Background()))
}
