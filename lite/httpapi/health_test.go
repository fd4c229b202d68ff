package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

func TestHealth_LivezVersion(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	status, text := e.text("GET", "/livez", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "ok", text, "Agnx's livez is text")

	var ready map[string]string
	e.call("GET", "/readyz", "", http.StatusOK, &ready)
	assert.Equal(t, "ok", ready["status"])
	real, err := filepath.EvalSymlinks(e.cfg.DataDir)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(real))
	assert.Equal(t, hex.EncodeToString(sum[:]), ready["workspace_hash"], "the SHA-256 of the canonical workspace path")

	var v map[string]string
	e.call("GET", "/version", "", http.StatusOK, &v)
	assert.Equal(t, "v-test", v["version"])
	assert.Equal(t, "core", v["variant"])
	assert.NotEmpty(t, v["commit"])
	assert.NotEmpty(t, v["build_date"])
	assert.True(t, strings.HasPrefix(v["go"], "go"))
	assert.NotEmpty(t, v["os"])
	assert.NotEmpty(t, v["arch"])
}

// readyz is ready only while the loop runs: not before Run has recovered
// the sessions, not after it stopped, not once the server is closing.
func TestHealth_Readyz(t *testing.T) {
	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	defer st.Close()
	loop := runtime.New(runtime.Options{Store: st, Agents: noAgents{}})
	api := httpapi.New(httpapi.Options{Loop: loop, Agents: dirAgents{}})
	get := func() *http.Response {
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, localRequest("GET", "/readyz"))
		return rec.Result()
	}
	p := requireProblem(t, get(), http.StatusServiceUnavailable, "service_unavailable")
	assert.Contains(t, p.Detail, "starting")

	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- loop.Run(ctx) }()
	<-loop.Ready()
	assert.Equal(t, http.StatusOK, get().StatusCode)

	stop()
	require.NoError(t, <-ran)
	p = requireProblem(t, get(), http.StatusServiceUnavailable, "service_unavailable")
	assert.Contains(t, p.Detail, "stopped")

	api2 := httpapi.New(httpapi.Options{Loop: loop, Agents: dirAgents{}})
	api2.Close()
	rec := httptest.NewRecorder()
	api2.ServeHTTP(rec, localRequest("GET", "/readyz"))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
}

func TestAdmin_StatusShutdownReload(t *testing.T) {
	called := make(chan struct{})
	e := newAPIEnv(t, llmtest.Echo(), func(o *httpapi.Options) {
		o.Shutdown = func() { close(called) }
		o.BaseURL = "http://127.0.0.1:1"
	})
	var st map[string]any
	e.call("GET", "/api/admin/v1/status", "", http.StatusOK, &st)
	assert.EqualValues(t, os.Getpid(), st["pid"])
	assert.Equal(t, "v-test", st["version"])
	assert.Equal(t, "http://127.0.0.1:1", st["address"])
	for _, k := range []string{"uptime_seconds", "sessions_resident", "turns_running", "turns_waiting", "inbox", "goroutines", "heap_bytes"} {
		assert.Contains(t, st, k)
	}

	e.addBroken("broken")
	status, text := e.text("POST", "/api/admin/v1/reload-agents", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "Reloaded 1 agents", text, "Agnx's text, counting the agents that load")
	var rl struct{ Agents []httpapi.AgentInfo }
	e.call("POST", "/api/admin/v1/reload-agents", "", http.StatusOK, &rl, "Accept: application/json")
	require.Len(t, rl.Agents, 2, "asked for JSON, each agent is reported")
	assert.Equal(t, "assistant", rl.Agents[0].Name)
	assert.Contains(t, rl.Agents[1].Err, "agent.yaml:")

	status, text = e.text("POST", "/api/admin/v1/shutdown", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "Shutdown initiated", text)
	<-called
	status, text = e.text("POST", "/api/admin/v1/shutdown", "")
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "Shutdown already in progress", text)
}

// text sends a request and returns the status and the body, which must
// be text/plain.
func (e *apiEnv) text(method, path, body string, headers ...string) (int, string) {
	e.t.Helper()
	resp := e.do(method, path, body, headers...)
	data, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	assert.Equal(e.t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
	return resp.StatusCode, string(data)
}

func TestUnknownRoute(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	for _, c := range [][2]string{{"GET", "/nope"}, {"GET", "/api/v1/sessions/x/y/z"}, {"GET", "/api/v2/agents"}} {
		p := requireProblem(t, e.do(c[0], c[1], ""), http.StatusNotFound, "not_found")
		assert.Contains(t, p.Detail, c[0]+" "+c[1])
		assert.Equal(t, c[1], p.Instance)
	}
	resp := e.do("PUT", "/api/v1/sessions", "")
	assert.Equal(t, "GET, POST", resp.Header.Get("Allow"))
	p := requireProblem(t, resp, http.StatusMethodNotAllowed, "method_not_allowed")
	assert.Contains(t, p.Detail, "use GET or POST")
}

// noAgents is a loader without agents.
type noAgents struct{}

func (noAgents) LoadAgent(string) (*runtime.LoadedAgent, error) { return nil, runtime.ErrAgentNotFound }

func TestMetricsRoute(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo(), func(o *httpapi.Options) {
		o.Metrics = func(w io.Writer) { io.WriteString(w, "agnx_goroutines 7\n") }
	})
	resp := e.do("GET", "/metrics", "")
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/plain; version=0.0.4; charset=utf-8", resp.Header.Get("Content-Type"))
	body, _ := io.ReadAll(resp.Body)
	assert.True(t, strings.HasPrefix(string(body), "agnx_goroutines 7\n# HELP agnx_http_refused_total "), "the daemon's metrics, then the server's: %s", body)
	assert.Contains(t, string(body), "agnx_http_auth_failures_total{route=\"signin\"} 0\n")
}

// localRequest is a request as a loopback client sends it (httptest's
// default Host, example.com, is not a name this server answers to).
func localRequest(method, path string) *http.Request {
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr, req.Host = "127.0.0.1:40000", "127.0.0.1:8080"
	return req
}
