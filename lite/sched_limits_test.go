package lite

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
)

// logWatch is a slog.Handler that hands the records with message msg to
// got: a test waits on it for what is only logged.
type logWatch struct {
	msg string
	got chan slog.Record
}

func (w *logWatch) Enabled(context.Context, slog.Level) bool { return true }

func (w *logWatch) Handle(_ context.Context, r slog.Record) error {
	if r.Message == w.msg {
		select {
		case w.got <- r.Clone():
		default:
		}
	}
	return nil
}

func (w *logWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *logWatch) WithGroup(string) slog.Handler      { return w }

// schedEnv is an app whose schedules fire on a clock the test moves, with
// an API session of the assistant for them to post to.
type schedEnv struct {
	app     *App
	clock   *testClock
	sid     string
	skipped *logWatch // "schedule run skipped"
}

func openSchedEnv(t *testing.T, edit func(*config.Config)) *schedEnv {
	t.Helper()
	fake := llmtest.NewHandler(t, llmtest.Ollama, func(llmtest.RecordedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "Backups are fine.", Usage: llmtest.Usage{Prompt: 40, Completion: 2}}
	})
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	edit(cfg)
	_, err := config.Init(cfg)
	require.NoError(t, err)
	e := &schedEnv{clock: &testClock{}, skipped: &logWatch{msg: "schedule run skipped", got: make(chan slog.Record, 4)}}
	e.app, err = Open(cfg, &Options{NoSync: true, Clock: e.clock.now, Logger: slog.New(e.skipped)})
	require.NoError(t, err)
	t.Cleanup(func() { e.app.Close() })
	info, err := e.app.Loop.CreateSession(context.Background(), runtime.NewSession{Agent: "assistant"})
	require.NoError(t, err)
	e.sid = info.ID
	return e
}

// task makes a task for the session due in d.
func (e *schedEnv) task(t *testing.T, d time.Duration) sched.Schedule {
	t.Helper()
	at := e.clock.now().Add(d)
	sc, err := e.app.Schedules().Create(context.Background(), sched.Schedule{Agent: "assistant", Timing: sched.Timing{At: &at},
		Destination: sched.Destination{SessionID: e.sid}, Payload: sched.Payload{Kind: sched.KindTask, Text: "check the backups"}})
	require.NoError(t, err)
	return sc
}

// fireDue moves the clock on by d and restarts the timer, which fires
// what is due at once.
func (e *schedEnv) fireDue(d time.Duration) {
	e.clock.advance(d)
	e.app.stopSchedules()
	e.app.runSchedules()
}

// firstTaskRuns fires the first task and waits for its turn's end.
func (e *schedEnv) firstTaskRuns(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info, err := e.app.Loop.Session(ctx, e.sid)
	require.NoError(t, err)
	sub, err := e.app.Loop.Follow(ctx, e.sid, info.LastSeq)
	require.NoError(t, err)
	defer sub.Close()
	e.fireDue(time.Minute)
	for ev := range sub.C() {
		if ev.Type == runtime.EvTurnEnd {
			require.Equal(t, runtime.TurnCompleted, ev.Reason)
			return
		}
	}
	t.Fatal("the first task's turn did not end")
}

// waitSkipped waits for the service to log a skipped run (after its
// record is written) and returns the schedule's runs.
func (e *schedEnv) waitSkipped(t *testing.T, id string) []sched.Run {
	t.Helper()
	select {
	case <-e.skipped.got:
	case <-time.After(30 * time.Second):
		t.Fatal("no run was skipped")
	}
	_, runs, err := e.app.Schedules().Get(context.Background(), id)
	require.NoError(t, err)
	return runs
}

// userMessages counts the session's stored user messages.
func (e *schedEnv) userMessages(t *testing.T) int {
	t.Helper()
	n := 0
	require.NoError(t, e.app.Loop.Events(context.Background(), e.sid, 0, func(ev runtime.Event) error {
		if ev.Type == runtime.EvUserMessage {
			n++
		}
		return nil
	}))
	return n
}

// A scheduled task's turn counts against the agent's daily token budget,
// and the next task past it is skipped with the budget's sentence in its
// run log and /metrics: no message is stored, so no turn is refused in
// the chat at every run, and the run is neither failed nor retried.
func TestSchedule_TaskPastTheBudgetIsSkipped(t *testing.T) {
	e := openSchedEnv(t, func(c *config.Config) { c.Sessions.DailyTokenBudget = 30 })
	e.task(t, time.Minute)
	second := e.task(t, 2*time.Minute)
	e.firstTaskRuns(t) // 42 tokens
	require.Equal(t, 1, e.userMessages(t))

	e.fireDue(time.Minute)
	runs := e.waitSkipped(t, second.ID)
	require.Len(t, runs, 1)
	assert.Equal(t, sched.RunSkipped, runs[0].Outcome)
	assert.True(t, strings.HasPrefix(runs[0].Reason, "assistant has used its daily token budget (42 of 30 tokens): the budget resets at midnight"),
		runs[0].Reason)
	assert.Empty(t, runs[0].Error)
	assert.Equal(t, 1, e.userMessages(t), "nothing stored for the skipped run")
	var m strings.Builder
	e.app.WriteMetrics(&m)
	assert.Contains(t, m.String(), `agnx_schedule_runs_skipped_total{reason="token_budget"} 1`+"\n")
	assert.Contains(t, m.String(), `agnx_schedule_runs_total{outcome="fired"} 1`+"\n")
	assert.Contains(t, m.String(), `agnx_schedule_runs_total{outcome="error"} 0`+"\n", "a skip is no error")
}

// scheduler.max_turns_per_hour reaches the scheduler: past it, a task is
// skipped with the reason in its run log.
func TestSchedule_TurnCeilingFromConfig(t *testing.T) {
	e := openSchedEnv(t, func(c *config.Config) { c.Scheduler.MaxTurnsPerHour = 1 })
	e.task(t, time.Minute)
	second := e.task(t, 2*time.Minute)
	e.firstTaskRuns(t)

	e.fireDue(time.Minute)
	runs := e.waitSkipped(t, second.ID)
	require.Len(t, runs, 1)
	assert.Equal(t, sched.RunSkipped, runs[0].Outcome)
	assert.Contains(t, runs[0].Reason, "agent assistant's schedules and heartbeat started as many turns in the last hour as they may (1)")
	assert.Equal(t, 1, e.userMessages(t))
	var m strings.Builder
	e.app.WriteMetrics(&m)
	assert.Contains(t, m.String(), `agnx_schedule_runs_skipped_total{reason="turn_ceiling"} 1`+"\n")
}

// A heartbeat's turn counts against its agent's daily token budget, and
// the heartbeat after it is skipped with the budget's sentence: nothing is
// recorded as fired, and nothing enters the heartbeat session.
func TestHeartbeatFire_PastTheBudgetIsSkipped(t *testing.T) {
	app, _, _ := openHB(t, llmtest.Reply{Text: "HEARTBEAT_OK"}, llmtest.Reply{Text: "HEARTBEAT_OK"})
	yaml := filepath.Join(app.Config.AgentsDir, "beat", "agent.yaml")
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(yaml, append(data, "  session: {daily_token_budget: 1}\n"...), 0o644))
	require.NoError(t, app.Agents.Reload("beat"))

	sid := fireAndWait(t, app, 1) // uses the budget
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before, err := app.Loop.Session(ctx, sid)
	require.NoError(t, err)
	f, _ := firing(t, app, 2)
	err = app.heartbeatFire(ctx, f)
	var skip *sched.SkipError
	require.ErrorAs(t, err, &skip)
	assert.Equal(t, runtime.CodeTokenBudget, skip.Code)
	assert.True(t, strings.HasPrefix(skip.Reason, "beat has used its daily token budget ("), skip.Reason)
	rec, err := app.Loop.KV(ctx, "test/run/xx")
	require.NoError(t, err)
	assert.Nil(t, rec, "nothing recorded as fired: the scheduler records the skip")
	after, err := app.Loop.Session(ctx, sid)
	require.NoError(t, err)
	assert.Equal(t, before.LastSeq, after.LastSeq, "nothing entered the heartbeat session")
}

// A task's turn refused anyway (the budget used while it was queued)
// reports why, not only that it failed.
func TestSchedHost_FailedTaskSaysWhy(t *testing.T) {
	h := &schedHost{reports: make(chan schedReport, 1), working: true} // no worker: the report stays queued
	h.turnEnded(runtime.TurnEnd{Origin: sched.Origin("sched_1"), Reason: runtime.TurnFailed,
		Error: "assistant has used its daily token budget (42 of 30 tokens)"})
	r := <-h.reports
	assert.Equal(t, schedReport{id: "sched_1", errMsg: "the task's turn ended failed: assistant has used its daily token budget (42 of 30 tokens)"}, r)
}
