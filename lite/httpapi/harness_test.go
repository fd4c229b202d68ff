package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

// env is the API over a real loop and store (lite.Open on a temp data dir
// with the template agent), talking to a fake Ollama through the real
// client, served by httptest on loopback.
type apiEnv struct {
	t    testing.TB
	fake *llmtest.Server
	cfg  *config.Config
	loop *runtime.Loop
	st   *storage.Store
	api  *httpapi.Server
	srv  *httptest.Server
	opts httpapi.Options
}

// newAPIEnv starts everything with h answering model calls. tweak may set
// options (tokens, Shutdown) before the server is built.
func newAPIEnv(t testing.TB, h llmtest.Handler, tweak ...func(*httpapi.Options)) *apiEnv {
	t.Helper()
	fake := llmtest.NewHandler(t, llmtest.Ollama, h)
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.AgentsDir = filepath.Join(cfg.DataDir, "agents")
	_, err := agents.WriteTemplate(cfg.AgentsDir, "assistant")
	require.NoError(t, err)
	cfg.Runtime.MemoryLimitMB = 0 // the guard would read the test process's RSS (and qemu's, emulated)
	app, err := lite.Open(cfg, &lite.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, app.Close()) })
	<-app.Loop.Ready()
	e := &apiEnv{t: t, fake: fake, cfg: cfg, loop: app.Loop, st: app.Store}
	e.serve(dirAgents{cfg.AgentsDir, app.Agents}, tweak...)
	return e
}

// serve builds the handler over e.loop and e.st and starts the server.
func (e *apiEnv) serve(ag httpapi.Agents, tweak ...func(*httpapi.Options)) {
	e.opts = httpapi.Options{Loop: e.loop, Agents: ag, Version: "v-test", KeepAlive: -1, Workspace: e.cfg.DataDir}
	for _, f := range tweak {
		f(&e.opts)
	}
	e.api = httpapi.New(e.opts)
	e.srv = httptest.NewServer(e.api)
	// Streams end first, so Close does not wait for them.
	e.t.Cleanup(func() { e.api.Close(); e.srv.Close() })
}

// dirAgents is the httpapi.Agents view of an agents folder, as lite's
// registry gives it: listings load each agent.yaml, Get loads through the
// loop's cache.
type dirAgents struct {
	dir   string
	cache runtime.AgentLoader
}

func (d dirAgents) List() ([]httpapi.AgentInfo, error) {
	list, err := agents.List(d.dir)
	if err != nil {
		return nil, err
	}
	var out []httpapi.AgentInfo
	for _, en := range list {
		a, err := agents.Load(en.Dir)
		if err != nil {
			out = append(out, httpapi.AgentInfo{Name: en.Name, Err: err.Error()})
			continue
		}
		out = append(out, httpapi.AgentInfo{Name: en.Name, Description: a.Description, Version: a.Version,
			Provider: a.Model.Provider, Model: a.Model.Name})
	}
	return out, nil
}

func (d dirAgents) Get(name string) (*agents.Agent, error) {
	la, err := d.cache.LoadAgent(name)
	if err != nil {
		return nil, err
	}
	return la.Spec, nil
}

func (d dirAgents) Reload() []httpapi.AgentInfo {
	list, _ := d.List()
	return list
}

// do sends a request with an optional JSON body and headers ("K: V").
func (e *apiEnv) do(method, path, body string, headers ...string) *http.Response {
	e.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, r)
	require.NoError(e.t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := e.srv.Client().Do(req)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// call sends a request, checks the status and decodes the JSON answer.
func (e *apiEnv) call(method, path, body string, want int, out any, headers ...string) {
	e.t.Helper()
	resp := e.do(method, path, body, headers...)
	data, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	require.Equal(e.t, want, resp.StatusCode, "%s %s: %s", method, path, data)
	if out != nil {
		require.NoError(e.t, json.Unmarshal(data, out), "%s", data)
	}
}

// session creates a session with the template agent.
func (e *apiEnv) session() string {
	e.t.Helper()
	var s struct {
		ID string `json:"session_id"`
	}
	e.call("POST", "/api/v1/sessions", `{"agent":"assistant"}`, http.StatusCreated, &s)
	require.NotEmpty(e.t, s.ID)
	return s.ID
}

// logSeqs lists the seqs of the session's events that a stream carries
// (every durable event but session_start).
func (e *apiEnv) logSeqs(sid string) []uint64 {
	e.t.Helper()
	var out []uint64
	require.NoError(e.t, runtime.ReadEvents(e.st, sid, 0, func(ev runtime.Event) error {
		if ev.Type != runtime.EvSessionStart {
			out = append(out, ev.Seq)
		}
		return nil
	}))
	return out
}

// lastSeq is the seq of the session's last event.
func (e *apiEnv) lastSeq(sid string) uint64 {
	e.t.Helper()
	info, err := runtime.ReadSession(e.st, sid)
	require.NoError(e.t, err)
	return info.LastSeq
}

// problemJSON is an RFC 7807 answer.
type problemJSON struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance"`
	Code     string `json:"code"`
}

// requireProblem checks resp is a problem+json with status and code (the
// type is Agnx's for 400, 404 and 500, urn:agnx-lite:problem:<code>
// otherwise), and returns it.
func requireProblem(t testing.TB, resp *http.Response, status int, code string) problemJSON {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, status, resp.StatusCode, "%s", data)
	assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
	var p problemJSON
	require.NoError(t, json.Unmarshal(data, &p), "%s", data)
	switch status {
	case http.StatusBadRequest:
		assert.Equal(t, "urn:duragent:problem:bad-request", p.Type)
		assert.Equal(t, "Bad Request", p.Title)
	case http.StatusNotFound:
		assert.Equal(t, "urn:duragent:problem:not-found", p.Type)
		assert.Equal(t, "Not Found", p.Title)
	case http.StatusInternalServerError:
		assert.Equal(t, "urn:duragent:problem:internal-error", p.Type)
		assert.Equal(t, "Internal Server Error", p.Title)
	default:
		assert.Equal(t, "urn:agnx-lite:problem:"+code, p.Type)
	}
	assert.Equal(t, code, p.Code)
	assert.Equal(t, status, p.Status)
	assert.NotEmpty(t, p.Title)
	assert.NotEmpty(t, p.Detail)
	return p
}

// requireRefused checks resp is Agnx's refusal of a caller: 401 with no
// body on /api/v1, 403 text "Admin access denied" on admin routes, with
// the hint (which must contain hint) in WWW-Authenticate.
func requireRefused(t testing.TB, resp *http.Response, admin bool, hint string) {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if admin {
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", data)
		assert.Equal(t, "Admin access denied", string(data))
		assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
	} else {
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s", data)
		assert.Empty(t, data)
	}
	wa := resp.Header.Get("WWW-Authenticate")
	assert.True(t, strings.HasPrefix(wa, `Bearer realm="agnx-lite"`), wa)
	assert.Contains(t, wa, hint)
}

// sseEv is one event read from a stream.
type sseEv struct {
	ID    uint64
	HasID bool
	Name  string
	Data  string
}

// decode unmarshals the event's data.
func (ev sseEv) decode(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal([]byte(ev.Data), v), "%s: %s", ev.Name, ev.Data)
}

// sseScan reads events from a text/event-stream body.
type sseScan struct{ sc *bufio.Scanner }

func newSSEScan(r io.Reader) *sseScan {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	return &sseScan{sc: sc}
}

// next returns the next event, or false at the end of the stream.
func (r *sseScan) next() (sseEv, bool) {
	var ev sseEv
	seen := false
	for r.sc.Scan() {
		line := r.sc.Text()
		if line == "" {
			if seen {
				return ev, true
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // comment (keep-alive)
		}
		k, v, _ := strings.Cut(line, ": ")
		seen = true
		switch k {
		case "id":
			n, err := strconv.ParseUint(v, 10, 64)
			if err == nil {
				ev.ID, ev.HasID = n, true
			}
		case "event":
			ev.Name = v
		case "data":
			ev.Data += v
		}
	}
	return ev, false
}

// all reads events until the stream ends.
func (r *sseScan) all() []sseEv {
	var out []sseEv
	for {
		ev, ok := r.next()
		if !ok {
			return out
		}
		out = append(out, ev)
	}
}

// openStream starts a GET of a session's events and returns once the
// server answered with the headers (so its subscription is live). It asks
// for lite's events (?events=all) unless query says which.
func (e *apiEnv) openStream(ctx context.Context, sid, query string, headers ...string) (*http.Response, *sseScan) {
	e.t.Helper()
	switch {
	case query == "":
		query = "?events=all"
	case !strings.Contains(query, "events="):
		query += "&events=all"
	}
	req, err := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/api/v1/sessions/"+sid+"/events"+query, nil)
	require.NoError(e.t, err)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := e.srv.Client().Do(req)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { resp.Body.Close() })
	require.Equal(e.t, http.StatusOK, resp.StatusCode)
	require.Equal(e.t, "text/event-stream", resp.Header.Get("Content-Type"))
	return resp, newSSEScan(resp.Body)
}

// streamIDs lists the ids of the events that carry one.
func streamIDs(evs []sseEv) []uint64 {
	var out []uint64
	for _, ev := range evs {
		if ev.HasID {
			out = append(out, ev.ID)
		}
	}
	return out
}

// jsonDecode decodes a response body.
func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }
