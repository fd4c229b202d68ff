package lite

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
	"github.com/agnx-lite/agnx-lite/storage"
)

// testClock is the schedules' clock in a test: the real time moved on by
// an offset the test sets, so the daemon's timer waits real (short)
// durations while "two minutes later" happens at once.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// serveWith runs Serve with the schedules' clock and returns once ready.
func serveWith(t *testing.T, cfg *config.Config, clock func() time.Time) *daemon {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	d := &daemon{stop: stop, served: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() {
		d.served <- Serve(ctx, cfg, &ServeOptions{Options: Options{NoSync: true, Clock: clock}, Version: "v-test",
			DrainTimeout: testDrain, Ready: func(u string) { ready <- u }})
	}()
	select {
	case d.url = <-ready:
	case err := <-d.served:
		t.Fatalf("Serve failed: %v", err)
	}
	t.Cleanup(func() {
		stop()
		select {
		case <-d.served:
		case <-time.After(drainTimeout + closeTimeout + 5*time.Second):
			t.Error("Serve did not return")
		}
	})
	return d
}

// remindHandler is a model that answers "remind me in 2 minutes" with a
// schedule tool call two minutes ahead of clock, then confirms.
func remindHandler(clock func() time.Time, text string) llmtest.Handler {
	return func(r llmtest.RecordedRequest) llmtest.Reply {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return llmtest.Reply{Text: "I will remind you. (" + last.Content + ")"}
		}
		at := clock().Add(2 * time.Minute).UTC().Format(time.RFC3339)
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "schedule",
			Arguments: `{"action": "create", "at": "` + at + `", "message": "` + text + `"}`}}}
	}
}

// schedTelegramConfig is a daemon with the Telegram gateway on the fake,
// user 42 allowed, and the assistant given the schedule tool.
func schedTelegramConfig(t *testing.T, tg *tgtest.Server) *config.Config {
	t.Helper()
	cfg := serveConfig(t, t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Sandbox.Mode = "trust"
	cfg.Gateways.Telegram = config.Telegram{Enabled: true, BotToken: tgtest.Token, Allowlist: []int64{42}, APIBaseURL: tg.URL}
	setSpec(t, cfg.AgentsDir+"/assistant", "  tools:\n    - {type: builtin, name: schedule}\n")
	return cfg
}

// count is how many of the chat's messages contain s.
func count(tg *tgtest.Server, chat int64, s string) int {
	n := 0
	for _, txt := range tg.Texts(chat) {
		if strings.Contains(txt, s) {
			n++
		}
	}
	return n
}

// "Remind me in 2 minutes" in a Telegram chat: the model schedules it,
// the daemon is stopped and started again before the time, and the
// reminder arrives in that chat, once, on time.
func TestSchedule_TelegramReminderAcrossARestart(t *testing.T) {
	if _, ok := any((*TelegramGateway)(nil)).(Follower); !ok {
		t.Skip("the Telegram gateway cannot deliver a session it did not start in this build (Follower)")
	}
	const reminder = "Time to stretch!"
	clock := &testClock{}
	fake := llmtest.NewHandler(t, llmtest.Ollama, remindHandler(clock.now, reminder))
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	tg := tgtest.New(t)
	cfg := schedTelegramConfig(t, tg)

	d := serveWith(t, cfg, clock.now)
	tg.Queue(tgtest.Private(42, "remind me in 2 minutes to stretch"))
	tg.Wait(t, "the confirmation", func() bool { return count(tg, 42, "I will remind you") == 1 })
	c := httpapi.NewClient(d.url, httpapi.ClientOptions{})
	list, err := c.Schedules(context.Background(), "", false)
	require.NoError(t, err)
	require.Len(t, list, 1)
	s := list[0]
	assert.Equal(t, sched.Destination{Gateway: "telegram", ChatID: "42"}, s.Destination)
	assert.Equal(t, sched.KindMessage, s.Payload.Kind)
	d.shutdown(t)
	assert.Zero(t, count(tg, 42, reminder), "not yet")

	// Back up two seconds before it is due.
	clock.advance(2*time.Minute - 2*time.Second)
	d = serveWith(t, cfg, clock.now)
	tg.Wait(t, "the reminder", func() bool { return count(tg, 42, reminder) > 0 })
	c = httpapi.NewClient(d.url, httpapi.ClientOptions{})
	got, err := c.Schedule(context.Background(), s.ID)
	require.NoError(t, err)
	assert.Equal(t, sched.Completed, got.Status)
	require.Len(t, got.Log, 1)
	assert.Equal(t, sched.RunFired, got.Log[0].Outcome)
	assert.False(t, got.Log[0].Late, "it ran on time")
	var status httpapi.Status
	d.call(t, http.MethodGet, "/api/admin/v1/status", "", http.StatusOK, &status)
	assert.Zero(t, status.SchedulesActive)
	metrics := scrape(t, d.url)
	assert.Contains(t, metrics, `agnx_schedule_runs_total{outcome="fired"} 1`)
	assert.Contains(t, metrics, "agnx_schedules_active 0")
	d.shutdown(t)
	assert.Equal(t, 1, count(tg, 42, reminder), "delivered once")
}

// scrape reads /metrics.
func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(data)
}

// A task scheduled from an HTTP session: after a restart its turn runs in
// that session with Agnx's task wording, and its outcome reaches the run
// log (ok) through the turn-end report.
func TestSchedule_TaskInAnAPISessionReportsItsTurn(t *testing.T) {
	clock := &testClock{}
	fake := llmtest.NewHandler(t, llmtest.Ollama, func(r llmtest.RecordedRequest) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "tool":
			return llmtest.Reply{Text: "Scheduled."}
		case strings.HasPrefix(last.Content, "[Scheduled Task]"):
			return llmtest.Reply{Text: "Backups are fine."}
		}
		at := clock.now().Add(2 * time.Minute).UTC().Format(time.RFC3339)
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "schedule",
			Arguments: `{"action": "create", "at": "` + at + `", "task": "check the backups"}`}}}
	})
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := serveConfig(t, t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Sandbox.Mode = "trust"
	setSpec(t, cfg.AgentsDir+"/assistant", "  tools:\n    - {type: builtin, name: schedule}\n")

	d := serveWith(t, cfg, clock.now)
	sid := d.session(t, "assistant")
	c := httpapi.NewClient(d.url, httpapi.ClientOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.Send(ctx, sid, "check the backups in 2 minutes")
	require.NoError(t, err)
	list, err := c.Schedules(ctx, "assistant", false)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, sched.Destination{SessionID: sid}, list[0].Destination)
	info, err := c.Session(ctx, sid)
	require.NoError(t, err)
	var status httpapi.Status
	d.call(t, http.MethodGet, "/api/admin/v1/status", "", http.StatusOK, &status)
	assert.Equal(t, 1, status.SchedulesActive)
	assert.True(t, status.SchedulesNext.Equal(list[0].Next), "%v, want %v", status.SchedulesNext, list[0].Next)
	assert.Contains(t, scrape(t, d.url), "agnx_schedules_active 1\n")
	d.shutdown(t)

	clock.advance(2*time.Minute - time.Second)
	d = serveWith(t, cfg, clock.now)
	c = httpapi.NewClient(d.url, httpapi.ClientOptions{})
	var task, answer string
	errDone := errors.New("done")
	err = c.Events(ctx, sid, info.LastSeq, false, func(e runtime.Event) error {
		switch e.Type {
		case runtime.EvUserMessage:
			task = e.Content
		case runtime.EvAssistant:
			answer = e.Content
		case runtime.EvTurnEnd:
			return errDone
		}
		return nil
	})
	require.ErrorIs(t, err, errDone)
	assert.Equal(t, "[Scheduled Task]\n\ncheck the backups\n\n(This is an automated task. Send the result to this chat.)", task)
	assert.Equal(t, "Backups are fine.", answer)
	d.shutdown(t) // the report is queued before the turn's end is published, and written before Close returns

	app, err := Open(cfg, &Options{NoSync: true})
	require.NoError(t, err)
	defer app.Close()
	got, runs, err := app.Schedules().Get(ctx, list[0].ID)
	require.NoError(t, err)
	assert.Equal(t, sched.Completed, got.Status)
	require.Len(t, runs, 1)
	assert.Equal(t, sched.RunOK, runs[0].Outcome, "%+v", runs[0])
	assert.Equal(t, sid, runs[0].SessionID)
}

// A firing that cannot store anything says why in one sentence: a chat
// without a session, a session that is gone. (Heartbeats are the
// heartbeat's: heartbeat*.go.)
func TestSchedFirer_Errors(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	_, err := config.Init(cfg)
	require.NoError(t, err)
	app, err := Open(cfg, &Options{NoSync: true})
	require.NoError(t, err)
	defer app.Close()
	fire := func(d sched.Destination, kind string) error {
		return app.sched.Fire(context.Background(), sched.Firing{
			Schedule: sched.Schedule{ID: "sched_x", Agent: "assistant", Destination: d, Payload: sched.Payload{Kind: kind, Text: "hi"}},
			Record:   func(*storage.Tx) error { return nil }, SetSession: func(string) {}})
	}
	err = fire(sched.Destination{Gateway: "telegram", ChatID: "99"}, sched.KindMessage)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the chat 99 of telegram has no session")
	err = fire(sched.Destination{SessionID: "session_gone"}, sched.KindMessage)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cancel the schedule if the session was deleted")
	info, err := app.Loop.CreateSession(context.Background(), runtime.NewSession{Agent: "assistant"})
	require.NoError(t, err)
	require.NoError(t, fire(sched.Destination{SessionID: info.ID}, sched.KindMessage))
	var m strings.Builder
	app.WriteMetrics(&m)
	assert.Contains(t, m.String(), `agnx_schedule_runs_total{outcome="fired"} 1`+"\n")
	assert.Contains(t, m.String(), `agnx_schedule_runs_total{outcome="error"} 2`+"\n")
	assert.Contains(t, m.String(), "# TYPE agnx_schedule_runs_total counter\n")
}
