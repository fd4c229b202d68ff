package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// webhookSink is an httptest server that hands each body it receives to C.
func webhookSink(t *testing.T) (string, chan map[string]any) {
	c := make(chan map[string]any, 32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		data, _ := io.ReadAll(r.Body)
		assert.NoError(t, json.Unmarshal(data, &body), "%s", data)
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		c <- body
	}))
	t.Cleanup(srv.Close)
	return srv.URL, c
}

func webhookNote(url, command string) runtime.Notification {
	return runtime.Notification{Session: "s1", Agent: "assistant", Tool: "bash", Type: "bash", Command: command, Subject: command,
		Success: true, Deliveries: []agents.Delivery{{Type: "log"}, {Type: "webhook", URL: url}}}
}

// start is a started worker.
func start(o Options) *Worker {
	w := New(o)
	_ = w.Start(context.Background())
	return w
}

// testNotifier may post to this host, where httptest listens.
func testNotifier(log *slog.Logger) *Worker {
	return start(Options{Logger: log, AllowLoopback: true})
}

// stop stops w as the root does: what is queued gets DrainTimeout.
func stop(w *Worker) error {
	ctx, cancel := context.WithTimeout(context.Background(), DrainTimeout)
	defer cancel()
	return w.Stop(ctx)
}

func TestNotify_Webhook(t *testing.T) {
	url, got := webhookSink(t)
	n := testNotifier(slog.New(slog.DiscardHandler))
	n.Command(webhookNote(url, "ls"))
	body := <-got
	assert.Equal(t, "command_notification", body["event"])
	assert.Equal(t, "s1", body["session_id"])
	assert.Equal(t, "assistant", body["agent"])
	assert.Equal(t, "ls", body["command"])
	assert.Equal(t, true, body["success"])
	assert.Equal(t, "bash", body["tool_type"])
	require.NoError(t, stop(n))
	assert.True(t, isClosed(n.done), "Stop waits for the worker")
	n.Command(webhookNote(url, "after")) // dropped, and does not block
	assert.Empty(t, got)
}

// What is queued when the daemon stops is still posted.
func TestNotify_CloseFlushesQueue(t *testing.T) {
	url, got := webhookSink(t)
	n := testNotifier(slog.New(slog.DiscardHandler))
	for _, s := range []string{"a", "b", "c"} {
		n.Command(webhookNote(url, s))
	}
	require.NoError(t, stop(n))
	require.Len(t, got, 3, "every queued post was made before Stop returned")
	for _, s := range []string{"a", "b", "c"} {
		assert.Equal(t, s, (<-got)["command"])
	}
}

// A webhook that does not answer holds shutdown until Stop's deadline, no
// longer.
func TestNotify_CloseCancelsSlowWebhook(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	n := testNotifier(slog.New(slog.DiscardHandler))
	n.Command(webhookNote(srv.URL, "slow"))
	n.Command(webhookNote(srv.URL, "queued behind it"))
	<-arrived
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, n.Stop(ctx), context.DeadlineExceeded, "Stop says it left some undelivered")
	assert.True(t, isClosed(n.done))
}

// A worker whose Start context ends stops on its own: the post in flight
// is cancelled, and what comes after is dropped without blocking.
func TestNotify_StartContextBoundsLife(t *testing.T) {
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	n := New(Options{Logger: slog.New(slog.DiscardHandler), AllowLoopback: true})
	require.NoError(t, n.Start(ctx))
	n.Command(webhookNote(srv.URL, "hangs"))
	<-arrived
	cancel()
	<-n.done
	n.Command(webhookNote(srv.URL, "after")) // dropped, and does not block
	require.NoError(t, stop(n), "the queue was empty when Stop came")
}

// Stop of a worker never started returns at once.
func TestNotify_StopUnstarted(t *testing.T) {
	assert.NoError(t, stop(New(Options{})))
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// A webhook may not reach this host or its link (the daemon's API, cloud
// metadata), nor be redirected; no delivery named means the log.
func TestNotify_Refuses(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	hits := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- r.URL.Path
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()

	n := start(Options{Logger: log})
	n.Command(webhookNote(srv.URL+"/hook", "ls"))
	n.Command(webhookNote("http://169.254.169.254/latest", "ls"))
	n.Command(runtime.Notification{Session: "s2", Agent: "assistant", Tool: "web", Type: "builtin", Command: "web:fetch"})
	require.NoError(t, stop(n))
	assert.Empty(t, hits, "loopback is refused")
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	assert.Equal(t, 2, strings.Count(out, "may not post to a loopback, link-local"), out)
	assert.Contains(t, out, `session=s2`, "no delivery: logged")
	assert.Contains(t, out, `command=web:fetch`)

	n = testNotifier(slog.New(slog.DiscardHandler))
	n.Command(webhookNote(srv.URL+"/redirect", "ls"))
	require.NoError(t, stop(n))
	require.Len(t, hits, 1, "a redirect is not followed")
	assert.Equal(t, "/redirect", <-hits)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
