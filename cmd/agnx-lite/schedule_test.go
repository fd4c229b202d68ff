package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
	"github.com/agnx-lite/agnx-lite/storage"
)

type firerFunc func(context.Context, sched.Firing) error

func (f firerFunc) Fire(ctx context.Context, fi sched.Firing) error { return f(ctx, fi) }

// seedSchedules makes two schedules in the cli's data dir: a reminder
// that already ran once, late (its clock jumped two hours), and a daily
// cron task. It returns their ids.
func seedSchedules(t *testing.T, c *cli) (ran, daily string) {
	t.Helper()
	cfg, err := config.Locate(c.cfg, c.dir)
	require.NoError(t, err)
	_, err = config.Init(cfg)
	require.NoError(t, err)
	st, err := storage.Open(cfg.DBPath(), &storage.Options{NoSync: true})
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	db := sched.FromStore(st)
	at := time.Now().Add(time.Hour)
	s1, err := sched.New(sched.Options{DB: db}).Create(ctx, sched.Schedule{Agent: "assistant", Timing: sched.Timing{At: &at},
		Destination: sched.Destination{Gateway: "telegram", ChatID: "42"}, Payload: sched.Payload{Kind: sched.KindMessage, Text: "stretch"}})
	require.NoError(t, err)
	s2, err := sched.New(sched.Options{DB: db}).Create(ctx, sched.Schedule{Agent: "helper", Timing: sched.Timing{Cron: "0 0 9 * * *"},
		Destination: sched.Destination{SessionID: "session_x"}, Payload: sched.Payload{Kind: sched.KindTask, Text: "summarize the news"}})
	require.NoError(t, err)

	fired := make(chan error, 1)
	svc := sched.New(sched.Options{DB: db, Now: func() time.Time { return time.Now().Add(2 * time.Hour) },
		Firer: firerFunc(func(_ context.Context, f sched.Firing) error {
			if f.Schedule.ID != s1.ID {
				return nil
			}
			f.SetSession("session_tg")
			err := st.Update(f.Record)
			fired <- err
			return err
		})})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- svc.Run(runCtx) }()
	select {
	case err := <-fired:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the reminder did not fire")
	}
	stop()
	require.NoError(t, <-done)
	return s1.ID, s2.ID
}

func TestCLI_ScheduleListShowCancel(t *testing.T) {
	c := newCLI(t)
	ran, daily := seedSchedules(t, c)

	code, out, errs := c.run("schedule", "list")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "ID")
	assert.Contains(t, out, daily)
	assert.Contains(t, out, "cron 0 0 9 * * *")
	assert.Contains(t, out, "session session_x")
	assert.NotContains(t, out, ran, "done: listed with --all only")

	code, out, errs = c.run("schedule", "list", "--all", "--agent", "assistant")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, ran)
	assert.Contains(t, out, "completed")
	assert.Contains(t, out, "fired (late)")
	assert.Contains(t, out, "telegram:42")
	assert.NotContains(t, out, daily, "another agent's")

	code, out, errs = c.run("schedule", "show", ran)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `message\s+stretch`, out)
	assert.Regexp(t, `runs\s+1 \(0 failed\)`, out)
	assert.Regexp(t, `fired\s+late`, out, "the run log shows the late run")

	code, out, errs = c.run("schedule", "show", ran, "--json")
	require.Equal(t, 0, code, errs)
	var detail struct {
		sched.Schedule
		Log []sched.Run `json:"run_log"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &detail), out)
	require.Len(t, detail.Log, 1)
	assert.True(t, detail.Log[0].Late)
	assert.Equal(t, "session_tg", detail.Log[0].SessionID)

	code, out, errs = c.run("schedule", "cancel", daily)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "cancelled "+daily+"\n", out)
	code, out, _ = c.run("schedule", "list")
	require.Equal(t, 0, code)
	assert.Equal(t, "no active schedules (--all shows the done and cancelled ones)\n", out)

	// The same through a running daemon, which holds the database.
	d := c.serve()
	require.NotEmpty(t, d.url)
	code, out, errs = c.run("schedule", "list", "--all", "--json")
	require.Equal(t, 0, code, errs)
	var list struct {
		Schedules []sched.Schedule `json:"schedules"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	require.Len(t, list.Schedules, 2)
	statuses := []sched.Status{list.Schedules[0].Status, list.Schedules[1].Status}
	assert.ElementsMatch(t, []sched.Status{sched.Completed, sched.Cancelled}, statuses)
	code, out, errs = c.run("schedule", "show", daily)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "cancelled")
	assert.Contains(t, out, "no runs yet")
	code, _, errs = c.run("schedule", "cancel", "sched_nope")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `there is no schedule "sched_nope": agnx-lite schedule list --all lists them`)
}

func TestCLI_ScheduleErrors(t *testing.T) {
	c := newCLI(t)
	for args, want := range map[string]string{
		"schedule":                 "say what to do: list, show ID or cancel ID",
		"schedule show":            "show needs one schedule id",
		"schedule cancel a b":      "cancel needs one schedule id",
		"schedule list x":          "list takes no words",
		"schedule list --agent ..": `--agent ".." is not an agent name`,
		"schedule frob":            `unknown subcommand "frob"`,
	} {
		code, _, errs := c.run(strings.Fields(args)...)
		assert.Equal(t, 2, code, args)
		assert.Contains(t, errs, want, args)
	}
	code, _, errs := c.run("schedule", "show", "sched_nope")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `there is no schedule "sched_nope"`)
}

// show says why a run was skipped.
func TestRunNote_SaysWhySkipped(t *testing.T) {
	r := sched.Run{Outcome: sched.RunSkipped, Reason: "assistant has used its daily token budget (42 of 30 tokens)"}
	assert.Equal(t, "assistant has used its daily token budget (42 of 30 tokens)", runNote(r))
}
