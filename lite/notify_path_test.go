package lite

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// posted is one request an httptest sink received.
type posted struct {
	path   string
	header http.Header
	body   string
}

// sink is an httptest server handing each request to its channel.
func sink(t *testing.T) (string, chan posted) {
	c := make(chan posted, 32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		c <- posted{path: r.URL.Path, header: r.Header.Clone(), body: string(data)}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, c
}

// notifyApp opens an App whose default agent has notifyYAML as spec.notify
// (indented under spec), the model echoing, notifications allowed to this
// host.
func notifyApp(t *testing.T, notifyYAML string, env map[string]config.Secret) (*App, *syncBuffer) {
	t.Helper()
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Sandbox.Env = env
	_, err := config.Init(cfg)
	require.NoError(t, err)
	if notifyYAML != "" {
		f, err := os.OpenFile(filepath.Join(cfg.AgentsDir, "assistant", "agent.yaml"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString("  notify:\n" + notifyYAML)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	logs := &syncBuffer{}
	app, err := Open(cfg, &Options{notifyLoopback: true, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { app.Close() })
	return app, logs
}

// App.Notify posts to ntfy (text body; title, priority, tags and the
// bearer token sandbox.env offers as headers) and to a webhook (JSON).
func TestAppNotify_NtfyAndWebhook(t *testing.T) {
	url, got := sink(t)
	app, _ := notifyApp(t, "    deliveries:\n"+
		"      - {type: ntfy, url: "+url+"/alerts, token: \"${NTFY_TOKEN}\", priority: high}\n"+
		"      - {type: webhook, url: "+url+"/hook}\n", map[string]config.Secret{"NTFY_TOKEN": "tk_123"})
	app.Notify(Notification{Agent: "assistant", SessionID: "s1", Title: "Backup\nreport", Text: "the backup failed", Origin: "process:p1"})
	ntfy := <-got
	assert.Equal(t, "/alerts", ntfy.path)
	assert.Equal(t, "the backup failed", ntfy.body)
	assert.Equal(t, "Backup report", ntfy.header.Get("Title"), "one line")
	assert.Equal(t, "high", ntfy.header.Get("Priority"))
	assert.Equal(t, "process", ntfy.header.Get("Tags"))
	assert.Equal(t, "Bearer tk_123", ntfy.header.Get("Authorization"))
	assert.Equal(t, "text/plain; charset=utf-8", ntfy.header.Get("Content-Type"))

	hook := <-got
	assert.Equal(t, "/hook", hook.path)
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(hook.body), &body))
	assert.Equal(t, "notification", body["event"])
	assert.Equal(t, "assistant", body["agent"])
	assert.Equal(t, "s1", body["session_id"])
	assert.Equal(t, "the backup failed", body["text"])
	assert.Equal(t, "process:p1", body["origin"])
}

// A token naming a variable sandbox.env does not offer is not sent (an
// imported agent may not post the daemon's secrets), nor is the
// notification; the next delivery still goes.
func TestAppNotify_TokenNotOffered(t *testing.T) {
	t.Setenv("SECRET_X", "daemon-secret")
	url, got := sink(t)
	app, logs := notifyApp(t, "    deliveries:\n"+
		"      - {type: ntfy, url: "+url+"/alerts, token: \"tk_${SECRET_X}\"}\n"+
		"      - {type: webhook, url: "+url+"/hook}\n", nil)
	app.Notify(Notification{Agent: "assistant", Text: "hello"})
	assert.Equal(t, "/hook", (<-got).path, "ntfy was skipped")
	assert.Contains(t, logs.String(), "SECRET_X, which sandbox.env in agnx.yaml does not offer")
	assert.NotContains(t, logs.String(), "daemon-secret")
}

// Text is cut to 4 KiB, title to one bounded line.
func TestNotification_Bounded(t *testing.T) {
	n := Notification{Agent: "a", Title: strings.Repeat("t ", 500), Text: strings.Repeat("é", 5000)}.bounded()
	assert.LessOrEqual(t, len(n.Text), maxNoticeText)
	assert.True(t, strings.HasSuffix(n.Text, "…"))
	assert.LessOrEqual(t, len(n.Title), maxNoticeTitle)
	assert.NotContains(t, n.Title, "\n")
	assert.Equal(t, "agnx-lite: a", Notification{Agent: "a"}.bounded().Title)
}

// ntfy goes through the webhooks' guard: this host, link-local (cloud
// metadata) addresses are refused at connect time.
func TestNotify_NtfyRefusesLoopback(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	url, got := sink(t)
	n := newNotifier(log, nil)
	n.notify(runtime.Notification{Session: "s1", Agent: "assistant", Tool: "bash", Type: "bash", Command: "ls",
		Deliveries: []agents.Delivery{{Type: "ntfy", URL: url + "/t"}, {Type: "ntfy", URL: "http://169.254.169.254/t"}}})
	n.close()
	assert.Empty(t, got, "loopback is refused")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2, strings.Count(logs.String(), "may not post to a loopback, link-local"), logs.String())
}

// A full queue drops a notification with a log line, and never blocks.
func TestNotify_QueueFullDrops(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	n := startNotifier(&notifier{log: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
	hold, held := make(chan struct{}), make(chan struct{})
	n.enqueue(notifyJob{what: "blocker", run: func(context.Context, *http.Client) { close(held); <-hold }})
	<-held // the worker is busy: what follows waits in the queue
	ran := 0
	for range webhookQueue + 1 {
		n.enqueue(notifyJob{what: "x", run: func(context.Context, *http.Client) { ran++ }})
	}
	mu.Lock()
	assert.Equal(t, 1, strings.Count(logs.String(), "notification queue full; dropped one"), logs.String())
	mu.Unlock()
	close(hold)
	n.close()
	assert.Equal(t, webhookQueue, ran, "the queued ones ran")
}

// A turn of an HTTP session that nobody watched gets a notice per the
// agent's spec.notify; one a client watched gets none, unless a schedule
// (an Origin) started it.
func TestTurnNotice_UnwatchedOnly(t *testing.T) {
	url, got := sink(t)
	app, _ := notifyApp(t, "    deliveries: [{type: webhook, url: "+url+"/hook}]\n", nil)
	ctx := context.Background()
	info, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant", Gateway: "http"})
	require.NoError(t, err)

	sub, err := app.Loop.Subscribe(ctx, info.ID)
	require.NoError(t, err)
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "watched"})
	require.NoError(t, err)
	waitTurnEnd(t, sub)
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "scheduled", Origin: "schedule:s1"})
	require.NoError(t, err)
	waitTurnEnd(t, sub)
	sub.Close()
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "alone"})
	require.NoError(t, err)

	texts := []string{hookText(t, <-got), hookText(t, <-got)}
	assert.Equal(t, []string{"assistant: echo: scheduled", "assistant: echo: alone"}, texts, "the watched turn gave none")
}

func waitTurnEnd(t *testing.T, sub *runtime.Subscription) {
	t.Helper()
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd {
			return
		}
	}
	t.Fatal("the subscription ended before the turn did")
}

func hookText(t *testing.T, p posted) string {
	t.Helper()
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(p.body), &body))
	s, _ := body["text"].(string)
	return s
}

// An ntfy token from an agent's file: any input, no panic; only offered
// names expand, text without "${" stays as written.
func FuzzExpandOffered(f *testing.F) {
	for _, s := range []string{"", "tk_plain", "${A}", "${env:A}", "x${A}y${A}", "${B}", "${", "${}", "$${A}", "${A", "}${A}{"} {
		f.Add(s)
	}
	offered := map[string]string{"A": "alpha"}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := expandOffered(s, offered)
		if !strings.Contains(s, "${") {
			require.NoError(t, err)
			assert.Equal(t, s, out)
		}
		if err != nil {
			assert.Empty(t, out)
		}
	})
}

func TestExpandOffered(t *testing.T) {
	got, err := expandOffered("tk_${A}-${env:A}", map[string]string{"A": "x"})
	require.NoError(t, err)
	assert.Equal(t, "tk_x-x", got)
	_, err = expandOffered("${HOME}", map[string]string{"A": "x"})
	assert.ErrorContains(t, err, "HOME, which sandbox.env in agnx.yaml does not offer")
	assert.Equal(t, "schedule", ntfyTag("schedule:01J"))
	assert.Equal(t, "process", ntfyTag("Process!:p1"))
}

func TestTurnNotification_Text(t *testing.T) {
	long := strings.Repeat("ü", 400)
	for _, c := range []struct {
		te   runtime.TurnEnd
		want string
	}{
		{runtime.TurnEnd{Agent: "a", Reason: runtime.TurnCompleted, Answer: " It is 17:00. "}, "a: It is 17:00."},
		{runtime.TurnEnd{Agent: "a", Reason: runtime.TurnCompleted}, "a: done, with no answer"},
		{runtime.TurnEnd{Agent: "a", Reason: runtime.TurnFailed, Answer: "no network"}, "a: the turn failed: no network"},
		{runtime.TurnEnd{Agent: "a", Reason: "odd"}, "a: the turn ended (odd)"},
		{runtime.TurnEnd{Agent: "a", Reason: runtime.TurnCompleted, Answer: long}, "a: " + strings.Repeat("ü", 300) + "…"},
	} {
		n := turnNotification(c.te)
		assert.Equal(t, c.want, n.Text)
		assert.Equal(t, "a", n.Agent)
	}
}
