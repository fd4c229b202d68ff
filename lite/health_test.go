package lite

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
)

// fakeTags is an Ollama that answers /api/tags, counting the requests;
// hang makes it answer nothing until the test ends.
type fakeTags struct {
	hits atomic.Int32
	hang atomic.Bool
	done chan struct{}
}

func (f *fakeTags) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.hits.Add(1)
	if f.hang.Load() {
		select {
		case <-f.done:
		case <-r.Context().Done():
		}
		return
	}
	_, _ = w.Write([]byte(`{"models":[{"name":"qwen3:1.7b"}]}`))
}

type healthJSON struct {
	Version       string `json:"version"`
	UptimeSeconds int64  `json:"uptime_seconds"`
	RSSBytes      int64  `json:"rss_bytes"`
	AgentsLoaded  int    `json:"agents_loaded"`
	AgentsDefined int    `json:"agents_defined"`
	Checks        []httpapi.HealthCheck
}

func (h healthJSON) check(name string) httpapi.HealthCheck {
	for _, c := range h.Checks {
		if c.Name == name {
			return c
		}
	}
	return httpapi.HealthCheck{}
}

// TestHealth: GET /api/v1/health with a model server up, cached, then
// down, then hanging past the probe's bound.
func TestHealth(t *testing.T) {
	fake := &fakeTags{done: make(chan struct{})}
	srv := httptest.NewServer(fake)
	t.Cleanup(func() { close(fake.done); srv.Close() })
	t.Setenv("OLLAMA_HOST", srv.URL)
	cfg := crashConfig(t.TempDir())
	_, err := Init(cfg)
	require.NoError(t, err)
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Sandbox.Mode = "trust" // the bwrap probe is the sandbox tests' business
	app, err := Open(cfg, &Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, app.Close()) })

	clock := time.Unix(1_800_000_000, 0)
	h := newHealthProbe(app)
	h.now = func() time.Time { return clock }
	api := httpapi.New(httpapi.Options{Loop: app.Loop, Agents: registry{app.Agents}, Version: "v1.2.3",
		RSS: app.RSS, Health: h.facts})
	get := func() healthJSON {
		t.Helper()
		req := httptest.NewRequest("GET", "/api/v1/health", nil)
		req.RemoteAddr, req.Host = "127.0.0.1:1", "127.0.0.1:8080"
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
		var out healthJSON
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		return out
	}

	got := get()
	ollama := "ollama " + srv.URL
	assert.Equal(t, "v1.2.3", got.Version)
	assert.Positive(t, got.RSSBytes)
	assert.Equal(t, 1, got.AgentsDefined)
	assert.Equal(t, 0, got.AgentsLoaded)
	assert.Equal(t, "ok", got.check(ollama).Status, "the default agent's server, none being loaded: %+v", got.Checks)
	assert.Contains(t, got.check(ollama).Detail, "qwen3:1.7b")
	assert.Contains(t, []string{"ok", "warn"}, got.check("memory").Status)
	assert.Equal(t, "ok", got.check("schedules").Status)
	assert.Equal(t, "none active", got.check("schedules").Detail)
	assert.Equal(t, "warn", got.check("sandbox").Status, "trust mode")
	if temp := got.check("temperature"); temp.Name != "" {
		assert.NotEqual(t, noSensor, temp.Detail, "no check when there is no sensor")
	}
	require.Equal(t, int32(1), fake.hits.Load())

	// Cached: a page reloaded in a loop does not reach Ollama.
	for range 5 {
		get()
	}
	assert.Equal(t, int32(1), fake.hits.Load())

	// The agent loaded: its server is the one probed.
	_, err = app.Agents.LoadAgent("assistant")
	require.NoError(t, err)
	clock = clock.Add(healthTTL)
	got = get()
	assert.Equal(t, 1, got.AgentsLoaded)
	assert.Equal(t, "ok", got.check(ollama).Status)
	assert.Equal(t, int32(2), fake.hits.Load())

	// Hanging: the probe gives up at its bound, and says so.
	fake.hang.Store(true)
	h.timeout = 50 * time.Millisecond
	clock = clock.Add(healthTTL)
	got = get()
	assert.Equal(t, "fail", got.check(ollama).Status)
	assert.Contains(t, got.check(ollama).Detail, "not reachable")

	// Down.
	fake.hang.Store(false)
	srv.CloseClientConnections()
	srv.Listener.Close()
	clock = clock.Add(healthTTL)
	got = get()
	assert.Equal(t, "fail", got.check(ollama).Status)
	assert.Contains(t, got.check(ollama).Fix, "ollama serve")
	assert.Len(t, got.Checks, len(get().Checks), "stable")
}
