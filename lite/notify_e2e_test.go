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
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/notify"
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

// The App's notifications post to ntfy (text body; title, priority, tags
// and the bearer token sandbox.env offers as headers) and to a webhook
// (JSON).
func TestAppNotify_NtfyAndWebhook(t *testing.T) {
	url, got := sink(t)
	app, _ := notifyApp(t, "    deliveries:\n"+
		"      - {type: ntfy, url: "+url+"/alerts, token: \"${NTFY_TOKEN}\", priority: high}\n"+
		"      - {type: webhook, url: "+url+"/hook}\n", map[string]config.Secret{"NTFY_TOKEN": "tk_123"})
	app.notify.Notify(notify.Notification{Agent: "assistant", SessionID: "s1", Title: "Backup\nreport", Text: "the backup failed", Origin: "process:p1"})
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
	app.notify.Notify(notify.Notification{Agent: "assistant", Text: "hello"})
	assert.Equal(t, "/hook", (<-got).path, "ntfy was skipped")
	assert.Contains(t, logs.String(), "SECRET_X, which sandbox.env in agnx.yaml does not offer")
	assert.NotContains(t, logs.String(), "daemon-secret")
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
