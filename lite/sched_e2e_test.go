package lite

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
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
func serveWith(t *testing.T, cfg *Config, clock func() time.Time) *daemon {
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
func schedTelegramConfig(t *testing.T, tg *tgtest.Server) *Config {
	t.Helper()
	cfg := serveConfig(t, t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Sandbox.Mode = "trust"
	cfg.Gateways.Telegram = TelegramConfig{Enabled: true, BotToken: tgtest.Token, Allowlist: []int64{42}, APIBaseURL: tg.URL}
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
