package lite

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/doctor"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/lite/webui"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
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
	_, err := config.Init(cfg)
	require.NoError(t, err)
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Sandbox.Mode = "trust" // the bwrap probe is the sandbox tests' business
	app, err := Open(cfg, &Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, app.Close()) })

	clock := time.Unix(1_800_000_000, 0)
	o := app.healthOptions()
	o.Now = func() time.Time { return clock }
	h := doctor.NewHealth(o)
	api := httpapi.New(httpapi.Options{Loop: app.Loop, Agents: registry{app}, Version: "v1.2.3",
		RSS: app.RSS, Health: func(ctx context.Context) httpapi.HealthFacts { return h.Facts(ctx) }})
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
		assert.NotEqual(t, "no sensor on this machine", temp.Detail, "no check when there is no sensor")
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
	clock = clock.Add(doctor.HealthTTL)
	got = get()
	assert.Equal(t, 1, got.AgentsLoaded)
	assert.Equal(t, "ok", got.check(ollama).Status)
	assert.Equal(t, int32(2), fake.hits.Load())

	// Hanging: the probe gives up at its bound, and says so.
	fake.hang.Store(true)
	o.Timeout = 50 * time.Millisecond
	h = doctor.NewHealth(o) // a probe of its own bound: the cache starts empty, as it would go stale
	clock = clock.Add(doctor.HealthTTL)
	got = get()
	assert.Equal(t, "fail", got.check(ollama).Status)
	assert.Contains(t, got.check(ollama).Detail, "not reachable")

	// Down.
	fake.hang.Store(false)
	srv.CloseClientConnections()
	srv.Listener.Close()
	clock = clock.Add(doctor.HealthTTL)
	got = get()
	assert.Equal(t, "fail", got.check(ollama).Status)
	assert.Contains(t, got.check(ollama).Fix, "ollama serve")
	assert.Len(t, got.Checks, len(get().Checks), "stable")
}

// TestServe_WebUI: the daemon serves the embedded page, and a browser
// signed in with the API token reads the health report with its cookie.
func TestServe_WebUI(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := serveConfig(t, t.TempDir())
	cfg.Server.APIToken = "web-ui-test-token"
	cfg.Sandbox.Mode = "trust"
	d := startServe(t, cfg)

	resp, err := http.Get(d.url + "/")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, webui.CSP, resp.Header.Get("Content-Security-Policy"))
	assert.Contains(t, strings.ToLower(string(page)), "<!doctype html>")

	resp, err = http.Get(d.url + "/api/v1/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	resp, err = http.Post(d.url+"/ui/signin", "application/json", strings.NewReader(`{"token":"web-ui-test-token"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.Len(t, resp.Cookies(), 1)
	req, err := http.NewRequest("GET", d.url+"/api/v1/health", nil)
	require.NoError(t, err)
	req.AddCookie(resp.Cookies()[0])
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var h healthJSON
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	assert.Equal(t, "v-test", h.Version)
	assert.Equal(t, "ok", h.check("ollama "+fake.BaseURL()).Status, "%+v", h.Checks)
	assert.Positive(t, h.RSSBytes)
}
