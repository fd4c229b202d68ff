package sched

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
)

// task is a task schedule of agent for session s1.
func task(agent string, tm Timing) Schedule {
	sc := message(tm)
	sc.Agent, sc.Payload = agent, Payload{Kind: KindTask, Text: "check the backups"}
	return sc
}

// firedOf returns the times agent's runs fired, in order.
func (f *fakeFirer) firedOf(agent string) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []time.Time
	for _, fg := range f.fired {
		if fg.Schedule.Agent == agent {
			out = append(out, fg.Run.Fired)
		}
	}
	return out
}

// assertSpaced checks consecutive times are at least MinRunGap apart.
func assertSpaced(t *testing.T, times []time.Time) {
	t.Helper()
	for i := 1; i < len(times); i++ {
		assert.GreaterOrEqual(t, times[i].Sub(times[i-1]), MinRunGap, "runs %d and %d", i-1, i)
	}
}

// Every timing keeps the floor: an interval or a cron expression whose
// runs can come closer than 10 s is refused with one sentence naming the
// floor and the gap (cron's is computed from its fields), whoever makes
// it; the "* * * * * *" fired 13 times in 12 s.
func TestService_FloorForEveryTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		ctx := context.Background()
		for tm, want := range map[*Timing]string{
			{Cron: "* * * * * *"}: `cron expression "* * * * * *" runs as little as 1s apart, under the 10s floor between a schedule's runs: ` +
				`space its runs at least 10s apart (such as "*/10" or one value in the seconds field)`,
			{Cron: "0,55 * * * * *"}: `cron expression "0,55 * * * * *" runs as little as 5s apart, under the 10s floor between a schedule's runs: ` +
				`space its runs at least 10s apart (such as "*/10" or one value in the seconds field)`,
			{Cron: "0,59 0,59 0,23 1,31 1,12 *"}: `cron expression "0,59 0,59 0,23 1,31 1,12 *" runs as little as 1s apart, under the 10s floor ` +
				`between a schedule's runs: space its runs at least 10s apart (such as "*/10" or one value in the seconds field)`,
			{EverySeconds: 9}: "every_seconds is 9, under the 10s floor between a schedule's runs: give 10 or more",
		} {
			_, err := h.s.Create(ctx, message(*tm))
			require.Error(t, err, "%+v", *tm)
			assert.Equal(t, want, err.Error())
			_, err = h.s.Put(ctx, Schedule{ID: "hb_a", Agent: "a", Timing: *tm, Payload: Payload{Kind: KindHeartbeat}})
			assert.Error(t, err, "Put keeps the floor too: %+v", *tm)
		}
		for _, tm := range []Timing{{Cron: "*/10 * * * * *"}, {Cron: "0,50 * * * * *"}, {EverySeconds: 10}, {Cron: "0 0 0 1 1 * 2030"}} {
			_, err := h.s.Create(ctx, message(tm))
			assert.NoError(t, err, "%+v", tm)
		}

		tool := NewTool(h.s)
		res := call(t, tool, "a", "42", `{"action":"create","cron":"* * * * * *","task":"poll"}`)
		assert.True(t, res.IsError)
		assert.Contains(t, res.Content, "Failed to create schedule: cron expression \"* * * * * *\" runs as little as 1s apart, under the 10s floor")
	})
}

// A hostile model's burst of one-shots all due at once (or a stored
// record that runs every second, or retries of 1 ms) cannot fire its
// agent faster than the floor: the runs are held one MinRunGap after
// another, none is lost or taken for a downtime, and other agents are not
// held.
func TestService_AgentRunsKeepTheFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		h.start()
		ctx := context.Background()
		at := time.Now().Add(time.Minute)
		const burst = 30
		for range burst {
			_, err := h.s.Create(ctx, task("a", Timing{At: &at}))
			require.NoError(t, err)
		}
		_, err := h.s.Create(ctx, task("b", Timing{At: &at}))
		require.NoError(t, err)
		sleep(time.Minute)
		assert.Len(t, h.firer.firedOf("a"), 1, "one of the burst at its time")
		require.Len(t, h.firer.firedOf("b"), 1, "another agent's run is not held")

		sleep(burst * MinRunGap)
		fired := h.firer.firedOf("a")
		require.Len(t, fired, burst, "every one-shot runs, one by one")
		assertSpaced(t, fired)
		assert.True(t, fired[burst-1].Sub(fired[0]) < burst*MinRunGap)
		for _, r := range h.firer.runs() {
			assert.False(t, r.Late, "a hold is no downtime")
			assert.True(t, r.Due.Equal(at))
		}
		assert.EqualValues(t, burst-1, h.s.Counts().Held)
	})
}

func TestService_StoredRecordUnderTheFloorIsSpaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		// Written before the floor existed (or straight into the file):
		// every second.
		require.NoError(t, h.st.Update(func(tx *storage.Tx) error {
			sc := message(Timing{Cron: "* * * * * *"})
			sc.ID, sc.Status, sc.Next = "sched_legacy", Active, time.Now().Add(time.Second)
			b, err := encodeSchedule(&sc)
			if err != nil {
				return err
			}
			return putSchedule(tx, sc.ID, b)
		}))
		h.start()
		sleep(time.Minute)
		fired := h.firer.firedOf("a")
		assert.Len(t, fired, 6, "once every 10 s, not 60 times")
		assertSpaced(t, fired)
	})
}

func TestService_RetriesKeepTheFloor(t *testing.T) {
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
		at := time.Now().Add(time.Minute)
		in := message(Timing{At: &at})
		in.Retry = &Retry{MaxRetries: 5, InitialDelayMS: 1, MaxDelayMS: 1}
		_, err := h.s.Create(context.Background(), in)
		require.NoError(t, err)
		sleep(10 * time.Minute)
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, tries, 6, "the run and its 5 retries")
		assertSpaced(t, tries)
	})
}

// Schedule-started turns (tasks, heartbeats) of one agent have a ceiling
// per hour: past it a run is skipped, recorded with the reason and
// counted, never queued; messages start no turn and are not counted;
// each agent has its own; an hour later the agent may again.
func TestService_TurnCeiling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		h.maxTurns = 3
		h.s = h.newService()
		h.start()
		ctx := context.Background()
		tk, err := h.s.Create(ctx, task("a", Timing{EverySeconds: 60}))
		require.NoError(t, err)
		hb, err := h.s.Put(ctx, Schedule{ID: "hb_a", Agent: "a", Timing: Timing{EverySeconds: 300}, Payload: Payload{Kind: KindHeartbeat}})
		require.NoError(t, err)
		msg, err := h.s.Create(ctx, message(Timing{EverySeconds: 60}))
		require.NoError(t, err)
		other, err := h.s.Create(ctx, task("b", Timing{EverySeconds: 60}))
		require.NoError(t, err)

		sleep(10*time.Minute + 30*time.Second)
		got, log := h.get(tk.ID)
		require.Len(t, log, 10)
		assert.Equal(t, 3, got.Runs, "the first three tasks ran")
		reason := "agent a's schedules and heartbeat started as many turns in the last hour as they may (3): this run is skipped; " +
			"raise scheduler.max_turns_per_hour or make its schedules run less often"
		for i, r := range log { // newest first
			if i < 7 {
				assert.Equal(t, RunSkipped, r.Outcome, "run %d", i)
				assert.Equal(t, reason, r.Reason)
				assert.True(t, r.Fired.IsZero())
			} else {
				assert.Equal(t, RunFired, r.Outcome, "run %d", i)
			}
		}
		_, hbLog := h.get(hb.ID)
		require.Len(t, hbLog, 2)
		for _, r := range hbLog {
			assert.Equal(t, RunSkipped, r.Outcome, "a heartbeat is a turn too")
		}
		_, msgLog := h.get(msg.ID)
		assert.Len(t, msgLog, 10)
		assert.Equal(t, RunFired, msgLog[0].Outcome, "a message starts no turn")
		got, _ = h.get(other.ID)
		assert.Equal(t, 3, got.Runs, "agent b has a ceiling of its own")
		assert.Equal(t, uint64(7+2+7), h.s.Counts().Skipped[SkipTurnCeiling])
		assert.Len(t, h.logs.records("schedule run skipped"), 16)

		sleep(time.Hour) // to 70:30: the turns of minutes 1 to 3 leave the window at 61 to 63
		got, _ = h.get(tk.ID)
		assert.Equal(t, 6, got.Runs, "an hour after the first turns, as many start again")
	})
}

// A Firer that skips a run on purpose (lite: the agent used its daily
// token budget) has it recorded skipped with its reason, neither failed
// nor retried, counted under its code, and not counted as a turn.
func TestService_FirerSkips(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		h.maxTurns = 1
		h.s = h.newService()
		h.start()
		const why = "a has used its daily token budget (42 of 30 tokens): the budget resets at midnight (UTC); raise spec.session.daily_token_budget to allow more"
		h.firer.setBefore(func(Firing) error { return fmt.Errorf("heartbeat: %w", &SkipError{Code: "token_budget", Reason: why}) })
		in := task("a", Timing{EverySeconds: 60})
		in.Retry = &Retry{MaxRetries: 3}
		sc, err := h.s.Create(context.Background(), in)
		require.NoError(t, err)
		sleep(time.Minute)
		got, log := h.get(sc.ID)
		require.Len(t, log, 1, "not retried")
		assert.Equal(t, RunSkipped, log[0].Outcome)
		assert.Equal(t, why, log[0].Reason)
		assert.Empty(t, log[0].Error)
		assert.Zero(t, got.Failures)
		assert.Zero(t, got.Attempt)
		assert.True(t, got.Next.Equal(sc.Next.Add(time.Minute)), "it goes on with its next tick")
		assert.Equal(t, map[string]uint64{"token_budget": 1}, h.s.Counts().Skipped)

		h.firer.setBefore(nil)
		sleep(time.Minute)
		_, log = h.get(sc.ID)
		assert.Equal(t, RunFired, log[0].Outcome, "the skipped run took none of the one turn an hour")
	})
}
