package lite

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// webhookSink is an httptest server that hands each body it receives to C.
func webhookSink(t *testing.T) (string, chan map[string]string) {
	c := make(chan map[string]string, 32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]string
		data, _ := io.ReadAll(r.Body)
		assert.NoError(t, json.Unmarshal(data, &body), "%s", data)
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		c <- body
	}))
	t.Cleanup(srv.Close)
	return srv.URL, c
}

func webhookNote(url, subject string) runtime.Notification {
	return runtime.Notification{Session: "s1", Agent: "assistant", Tool: "bash", Subject: subject, Decision: "allow",
		Deliveries: []agents.Delivery{{Type: "log"}, {Type: "webhook", URL: url}}}
}

func TestNotifier_Webhook(t *testing.T) {
	url, got := webhookSink(t)
	n := newNotifier(slog.New(slog.DiscardHandler))
	n.notify(webhookNote(url, "ls"))
	body := <-got
	assert.Equal(t, "s1", body["session_id"])
	assert.Equal(t, "ls", body["subject"])
	assert.Equal(t, "allow", body["decision"])
	n.close()
	assert.True(t, isClosed(n.done), "close waits for the worker")
	n.notify(webhookNote(url, "after")) // dropped, and does not block
	assert.Empty(t, got)
}

// What is queued when the daemon stops is still posted.
func TestNotifier_CloseFlushesQueue(t *testing.T) {
	url, got := webhookSink(t)
	n := newNotifier(slog.New(slog.DiscardHandler))
	for _, s := range []string{"a", "b", "c"} {
		n.notify(webhookNote(url, s))
	}
	n.close()
	require.Len(t, got, 3, "every queued post was made before close returned")
	for _, s := range []string{"a", "b", "c"} {
		assert.Equal(t, s, (<-got)["subject"])
	}
}

// A webhook that does not answer holds shutdown for drain, no longer.
func TestNotifier_CloseCancelsSlowWebhook(t *testing.T) {
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
	n := newNotifier(slog.New(slog.DiscardHandler))
	n.drain = 10 * time.Millisecond
	n.notify(webhookNote(srv.URL, "slow"))
	n.notify(webhookNote(srv.URL, "queued behind it"))
	<-arrived
	n.close()
	assert.True(t, isClosed(n.done))
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
