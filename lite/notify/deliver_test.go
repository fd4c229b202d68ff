package notify

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
)

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
	url, got := webhookSink(t)
	n := start(Options{Logger: log})
	n.Command(runtime.Notification{Session: "s1", Agent: "assistant", Tool: "bash", Type: "bash", Command: "ls",
		Deliveries: []agents.Delivery{{Type: "ntfy", URL: url + "/t"}, {Type: "ntfy", URL: "http://169.254.169.254/t"}}})
	require.NoError(t, stop(n))
	assert.Empty(t, got, "loopback is refused")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2, strings.Count(logs.String(), "may not post to a loopback, link-local"), logs.String())
}

// A full queue drops a notification with a log line, and never blocks.
func TestNotify_QueueFullDrops(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	n := start(Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
	hold, held := make(chan struct{}), make(chan struct{})
	n.enqueue(job{what: "blocker", run: func(context.Context, *http.Client) { close(held); <-hold }})
	<-held // the worker is busy: what follows waits in the queue
	ran := 0
	for range webhookQueue + 1 {
		n.enqueue(job{what: "x", run: func(context.Context, *http.Client) { ran++ }})
	}
	mu.Lock()
	assert.Equal(t, 1, strings.Count(logs.String(), "notification queue full; dropped one"), logs.String())
	mu.Unlock()
	close(hold)
	require.NoError(t, stop(n))
	assert.Equal(t, webhookQueue, ran, "the queued ones ran")
}

// Notify follows the agent's spec.notify: its deliveries, nothing when it
// says never, the defaults (the log) when its files cannot be read; a
// notification without an agent or text is dropped at once.
func TestWorker_NotifySettings(t *testing.T) {
	url, got := webhookSink(t)
	var logs strings.Builder
	var mu sync.Mutex
	w := start(Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil)), AllowLoopback: true,
		Agents: fakeAgents{specs: map[string]agents.NotifySettings{
			"hooked": {When: agents.NotifyUnwatched, Deliveries: []agents.Delivery{{Type: "webhook", URL: url}}},
			"silent": {When: agents.NotifyNever, Deliveries: []agents.Delivery{{Type: "webhook", URL: url}}},
		}}})
	w.Notify(Notification{Agent: "silent", Text: "not sent"})
	w.Notify(Notification{Agent: "hooked", Text: "sent", Origin: "process"})
	w.Notify(Notification{Agent: "gone", Text: "to the log"})
	w.Notify(Notification{Agent: "hooked", Text: "  "})
	require.NoError(t, stop(w))

	require.Len(t, got, 1, "never sends nothing")
	body := <-got
	assert.Equal(t, "notification", body["event"])
	assert.Equal(t, "sent", body["text"])
	assert.Equal(t, "agnx-lite: hooked", body["title"])
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, logs.String(), "notification settings unreadable; using the defaults")
	assert.Contains(t, logs.String(), `text="to the log"`)
	assert.Contains(t, logs.String(), "a notification without an agent or text was dropped")
}

// An ntfy post carries the text as its body, the title, priority and
// origin's kind as headers and the token as a bearer token, taking
// ${NAME} only from what sandbox.env offers.
func TestWorker_NtfyPost(t *testing.T) {
	w := New(Options{Env: map[string]config.Secret{"NTFY_TOKEN": "tk_123"}})
	x := Notification{Agent: "a", Title: "Backup", Text: "failed", Origin: "schedule:01J"}
	p, err := w.ntfyPost(agents.Delivery{Type: "ntfy", URL: "https://ntfy.sh/t", Token: "${NTFY_TOKEN}", Priority: "high"}, x)
	require.NoError(t, err)
	assert.Equal(t, "https://ntfy.sh/t", p.url)
	assert.Equal(t, "failed", string(p.body))
	assert.Equal(t, "text/plain; charset=utf-8", p.contentType)
	assert.Equal(t, map[string]string{"Title": "Backup", "Priority": "high", "Tags": "schedule", "Authorization": "Bearer tk_123"}, p.headers)

	_, err = w.ntfyPost(agents.Delivery{Type: "ntfy", URL: "https://ntfy.sh/t", Token: "${HOME}"}, x)
	assert.ErrorContains(t, err, "HOME, which sandbox.env in agnx.yaml does not offer")
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
