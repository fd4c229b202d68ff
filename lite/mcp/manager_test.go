package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

func newManager(t testing.TB, o Options) *Manager {
	t.Helper()
	m := NewManager(o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		assert.NoError(t, m.Close(ctx))
	})
	return m
}

// find returns the tool named name.
func find(t testing.TB, tools []runtime.Tool, name string) runtime.Tool {
	t.Helper()
	for _, tl := range tools {
		if tl.Spec().Name == name {
			return tl
		}
	}
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.Spec().Name
	}
	require.Failf(t, "no such tool", "%s not among %v", name, names)
	return nil
}

func run(t testing.TB, tl runtime.Tool, args string) (runtime.Result, error) {
	t.Helper()
	return tl.Run(context.Background(), []byte(args))
}

func statOf(m *Manager, server string) Stat {
	for _, s := range m.Stats() {
		if s.Server == server {
			return s
		}
	}
	return Stat{}
}

func TestStdio_CallStructured(t *testing.T) {
	d := &spawnDirect{}
	m := newManager(t, Options{Spawn: d.spawn, Env: modeEnv("plain")})
	srv := stdioServer(t, "te st", "plain")
	tools, warns := m.Tools(context.Background(), "a", t.TempDir(), []Server{srv})
	require.Empty(t, warns)
	echo := find(t, tools, "te_st__echo")
	assert.Equal(t, "mcp", echo.(runtime.Kinded).Kind())
	assert.Equal(t, "te st:echo", echo.(runtime.Invoked).Invocation())
	assert.Contains(t, string(echo.Spec().Schema), `"text"`)
	find(t, tools, "te_st__resources")

	res, err := run(t, echo, `{"text":"hi"}`)
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.JSONEq(t, `{"echoed":"hi","length":2}`, res.Content)
	var det struct {
		Structured echoOut `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(res.Details, &det))
	assert.Equal(t, echoOut{Echoed: "hi", Length: 2}, det.Structured)

	res, err = run(t, find(t, tools, "te_st__fail"), `{}`)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "failed on purpose")

	res, err = run(t, echo, `[1]`)
	require.NoError(t, err)
	assert.True(t, res.IsError, "arguments that are not an object never reach the server")

	st := statOf(m, "te st")
	assert.True(t, st.Running)
	assert.Positive(t, st.PID)
	assert.Positive(t, st.RSS, "the server's memory is reported")
	assert.Equal(t, uint64(0), st.Restarts)
	assert.Equal(t, 1, d.count(), "one start served the list and the calls")
}

func TestStdio_Resources(t *testing.T) {
	d := &spawnDirect{}
	m := newManager(t, Options{Spawn: d.spawn, Env: modeEnv("plain")})
	tools, _ := m.Tools(context.Background(), "a", t.TempDir(), []Server{stdioServer(t, "s", "plain")})
	rt := find(t, tools, "s__resources")
	assert.Equal(t, "s:resources", rt.(runtime.Invoked).Invocation())
	res, err := run(t, rt, `{"action":"list"}`)
	require.NoError(t, err)
	assert.Contains(t, res.Content, "test://hello — hello (text/plain)")
	res, err = run(t, rt, `{"action":"read","uri":"test://hello"}`)
	require.NoError(t, err)
	assert.Equal(t, "hello world", res.Content)
	res, err = run(t, rt, `{"action":"delete"}`)
	require.NoError(t, err)
	assert.True(t, res.IsError)
}

func TestStdio_CrashThenBackoffThenRestart(t *testing.T) {
	d := &spawnDirect{}
	m := newManager(t, Options{Spawn: d.spawn, Env: modeEnv("plain")})
	m.backoffBase = time.Hour // the retry moment is moved by hand below
	tools, _ := m.Tools(context.Background(), "a", t.TempDir(), []Server{stdioServer(t, "s", "plain")})

	_, err := run(t, find(t, tools, "s__crash"), `{}`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `MCP server "s" failed during tools/call crash`)
	assert.Contains(t, err.Error(), "crashing on purpose", "the failed call's sentence has the server's stderr too")

	start := time.Now()
	_, err = run(t, find(t, tools, "s__echo"), `{"text":"x"}`)
	require.Error(t, err, "inside the backoff a call fails at once")
	assert.Less(t, time.Since(start), time.Second)
	assert.Contains(t, err.Error(), "is down")
	assert.Contains(t, err.Error(), "crashing on purpose", "what the server said on stderr is in the sentence")
	assert.Contains(t, err.Error(), "it exited with status 3", "and how it ended")
	assert.NotContains(t, err.Error(), "<nil>")
	assert.Equal(t, 1, d.count())

	s := m.servers[serverKey{"a", "s"}]
	s.mu.Lock()
	s.retryAt = time.Now() // the backoff is over
	s.mu.Unlock()
	res, err := run(t, find(t, tools, "s__echo"), `{"text":"x"}`)
	require.NoError(t, err)
	assert.False(t, res.IsError)
	st := statOf(m, "s")
	assert.Equal(t, uint64(1), st.Restarts)
	assert.Equal(t, uint64(1), st.Failures)
	assert.Equal(t, 2, d.count())
}

func TestBackoff(t *testing.T) {
	m := NewManager(Options{})
	s := newServer(m, "a", "", Server{Name: "s"}, "k")
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 32 * time.Second, time.Minute, time.Minute},
		[]time.Duration{s.backoff(1), s.backoff(2), s.backoff(3), s.backoff(6), s.backoff(7), s.backoff(100)})
}

func TestStdio_HangTimesOutAndRestarts(t *testing.T) {
	d := &spawnDirect{}
	// The call timeout bounds a server's start too: the starts get the
	// default minute (the server is this test binary, slow to start under
	// qemu on a loaded box), the hanging call 3 s. Each is read when its
	// call begins, on this goroutine.
	m := newManager(t, Options{Spawn: d.spawn, Env: modeEnv("plain")})
	tools, _ := m.Tools(context.Background(), "a", t.TempDir(), []Server{stdioServer(t, "s", "plain")})
	m.o.CallTimeout = 3 * time.Second
	start := time.Now()
	_, err := run(t, find(t, tools, "s__hang"), `{}`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `did not answer tools/call hang within 3s`)
	assert.Less(t, time.Since(start), 10*time.Second)

	m.o.CallTimeout = DefaultCallTimeout
	res, err := run(t, find(t, tools, "s__echo"), `{"text":"again"}`)
	require.NoError(t, err, "the next call starts the server again")
	assert.Contains(t, res.Content, "again")
	assert.Equal(t, 2, d.count())
}

func TestStdio_LazyStartFromCacheAndIdleStop(t *testing.T) {
	cache := &mapCache{}
	d := &spawnDirect{}
	srv := stdioServer(t, "s", "plain")
	ws := t.TempDir()
	m1 := newManager(t, Options{Spawn: d.spawn, Env: modeEnv("plain"), Cache: cache})
	tools1, _ := m1.Tools(context.Background(), "a", ws, []Server{srv})
	require.Equal(t, 1, d.count())
	require.NoError(t, m1.Close(context.Background()))

	stopped := make(chan string, 4)
	m := newManager(t, Options{Spawn: d.spawn, Env: modeEnv("plain"), Cache: cache, IdleTimeout: 100 * time.Millisecond})
	m.stopped = func(_, server string) { stopped <- server }
	tools, warns := m.Tools(context.Background(), "a", ws, []Server{srv})
	require.Empty(t, warns)
	assert.Len(t, tools, len(tools1))
	assert.Equal(t, 1, d.count(), "tools from the cache start nothing")
	assert.False(t, statOf(m, "s").Running)

	res, err := run(t, find(t, tools, "s__echo"), `{"text":"lazy"}`)
	require.NoError(t, err)
	assert.Contains(t, res.Content, "lazy")
	assert.Equal(t, 2, d.count(), "the first call starts the server")

	select {
	case name := <-stopped:
		assert.Equal(t, "s", name)
	case <-time.After(30 * time.Second):
		require.Fail(t, "the idle server was not stopped")
	}
	assert.False(t, statOf(m, "s").Running)
	_, err = run(t, find(t, tools, "s__echo"), `{"text":"again"}`)
	require.NoError(t, err)
	assert.Equal(t, 3, d.count())

	// A changed entry misses the cache.
	srv2 := srv
	srv2.Args = []string{"-test.run=none"}
	_, _ = m.Tools(context.Background(), "a", ws, []Server{srv2})
	assert.NotEqual(t, cacheKey("a", ws, srv, modeEnv("plain")), cacheKey("a", ws, srv2, modeEnv("plain")))
	assert.Equal(t, 4, d.count())
}

// TestStdio_StaleCache: a list from the cache is checked against the
// server once it starts; a difference updates the cache and is reported.
func TestStdio_StaleCache(t *testing.T) {
	cache := &mapCache{}
	d := &spawnDirect{}
	srv := stdioServer(t, "s", "plain")
	ws := t.TempDir()
	key := cacheKey("a", ws, srv, modeEnv("plain"))
	require.NoError(t, cache.Put(context.Background(), key,
		[]byte(`{"tools":[{"name":"echo","schema":{"type":"object"}},{"name":"gone","schema":{"type":"object"}}]}`)))
	changed := make(chan string, 1)
	m := newManager(t, Options{Spawn: d.spawn, Env: modeEnv("plain"), Cache: cache,
		Changed: func(agent string) { changed <- agent }})
	tools, _ := m.Tools(context.Background(), "a", ws, []Server{srv})
	require.Len(t, tools, 2, "the cached list, nothing started")
	require.Equal(t, 0, d.count())
	_, err := run(t, find(t, tools, "s__echo"), `{"text":"x"}`)
	require.NoError(t, err)
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		require.Fail(t, "the stale list was not reported")
	}
	tools, _ = m.Tools(context.Background(), "a", ws, []Server{srv})
	find(t, tools, "s__change")
	assert.NotContains(t, string(cache.m[key]), `"gone"`)
}

func TestStdio_ManyTools(t *testing.T) {
	d := &spawnDirect{}
	m := newManager(t, Options{Spawn: d.spawn, Env: modeEnv("many")})
	tools, warns := m.Tools(context.Background(), "a", t.TempDir(), []Server{stdioServer(t, "s", "many")})
	assert.Len(t, tools, maxTools+1, "128 tools and the resources tool")
	require.NotEmpty(t, warns)
	assert.Contains(t, strings.Join(warns, "\n"), "offers more than 128 tools")
	assert.Equal(t, maxTools, statOf(m, "s").Tools)
}

func TestStdio_BigSchema(t *testing.T) {
	d := &spawnDirect{}
	m := newManager(t, Options{Spawn: d.spawn, Env: modeEnv("big")})
	tools, warns := m.Tools(context.Background(), "a", t.TempDir(), []Server{stdioServer(t, "s", "big")})
	assert.Contains(t, strings.Join(warns, "\n"), `tool "big" has an input schema over the 64 KiB limit: dropped`)
	for _, tl := range tools {
		assert.NotEqual(t, "s__big", tl.Spec().Name)
		assert.LessOrEqual(t, len(tl.Spec().Description), maxDescription+len("…"))
	}
	find(t, tools, "s__long")
	assert.False(t, statOf(m, "s").Running,
		"a session that read a 5 MB message is ended, not kept with the buffer it grew")
	res, err := run(t, find(t, tools, "s__echo"), `{"text":"still up"}`)
	require.NoError(t, err, "the server stays usable")
	assert.Contains(t, res.Content, "still up")
	assert.Equal(t, 2, d.count(), "started again, without listing: the list is kept")
	assert.True(t, statOf(m, "s").Running)
}

// TestStdio_ListMemoryBounded: what a server lists costs the manager
// bounded memory once listed, whatever it sent: 10,000 tools, or a 5 MB
// schema (whose session is ended once unused, with the buffer it grew).
func TestStdio_ListMemoryBounded(t *testing.T) {
	for _, mode := range []string{"many", "big"} {
		d := &spawnDirect{}
		m := newManager(t, Options{Spawn: d.spawn, Env: modeEnv(mode)})
		stopped := make(chan string, 1)
		m.stopped = func(_, s string) { stopped <- s }
		before := heap()
		tools, _ := m.Tools(context.Background(), "a", t.TempDir(), []Server{stdioServer(t, "s", mode)})
		if mode == "big" {
			select {
			case <-stopped:
			case <-time.After(30 * time.Second):
				require.Fail(t, "the session that read 5 MB was not ended")
			}
		}
		grown := heap() - before
		assert.Less(t, grown, int64(4<<20), "%s: the heap kept %d KiB", mode, grown>>10)
		goruntime.KeepAlive(tools)
	}
}

// heap is the live heap after a full collection (two: sync.Pool keeps
// what it holds for one more).
func heap() int64 {
	var ms goruntime.MemStats
	goruntime.GC()
	goruntime.GC()
	goruntime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

func TestStdio_ListChanged(t *testing.T) {
	d := &spawnDirect{}
	changed := make(chan string, 4)
	cache := &mapCache{}
	m := newManager(t, Options{Spawn: d.spawn, Env: modeEnv("plain"), Cache: cache,
		Changed: func(agent string) { changed <- agent }})
	ws := t.TempDir()
	srv := stdioServer(t, "s", "plain")
	tools, _ := m.Tools(context.Background(), "a", ws, []Server{srv})
	_, err := run(t, find(t, tools, "s__change"), `{}`)
	require.NoError(t, err)
	select {
	case agent := <-changed:
		assert.Equal(t, "a", agent)
	case <-time.After(30 * time.Second):
		require.Fail(t, "Changed was not called")
	}
	tools, _ = m.Tools(context.Background(), "a", ws, []Server{srv})
	res, err := run(t, find(t, tools, "s__added"), `{"text":"new"}`)
	require.NoError(t, err)
	assert.Contains(t, res.Content, "new")
	assert.Contains(t, string(cache.m[cacheKey("a", ws, srv, modeEnv("plain"))]), `"added"`, "the cache has the new list")
}

func TestClose_StopsEverything(t *testing.T) {
	d := &spawnDirect{}
	m := NewManager(Options{Spawn: d.spawn, Env: modeEnv("plain")})
	ws := t.TempDir()
	tools, _ := m.Tools(context.Background(), "a", ws, []Server{stdioServer(t, "s", "plain"), stdioServer(t, "u", "plain")})
	tools2, _ := m.Tools(context.Background(), "b", ws, []Server{stdioServer(t, "s", "plain")})
	require.Equal(t, 3, d.count())
	pid := statOf(m, "u").PID
	require.NoError(t, m.Close(context.Background()))
	assert.Empty(t, m.Stats())
	_, err := run(t, find(t, tools, "s__echo"), `{}`)
	require.Error(t, err)
	_, err = run(t, find(t, tools2, "s__echo"), `{}`)
	require.Error(t, err)
	assert.Equal(t, 3, d.count(), "nothing starts after Close")
	assert.NoFileExists(t, "/proc/"+strconv.Itoa(pid)+"/stat", "the server process is gone")
}

func TestForget(t *testing.T) {
	d := &spawnDirect{}
	stopped := make(chan string, 4)
	m := newManager(t, Options{Spawn: d.spawn, Env: modeEnv("plain")})
	m.stopped = func(agent, _ string) { stopped <- agent }
	_, _ = m.Tools(context.Background(), "a", t.TempDir(), []Server{stdioServer(t, "s", "plain")})
	m.Forget("a")
	select {
	case agent := <-stopped:
		assert.Equal(t, "a", agent)
	case <-time.After(30 * time.Second):
		require.Fail(t, "the forgotten agent's server was not stopped")
	}
	assert.Empty(t, m.Stats())
}

func TestHTTP_StreamableAndSSE(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	srv := testServer("plain", false)
	record := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auth = append(auth, r.Header.Get("Authorization"))
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	streamable := httptest.NewServer(record(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	t.Cleanup(streamable.Close) // after the manager's Close
	sse := httptest.NewServer(record(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	t.Cleanup(sse.Close)

	m := newManager(t, Options{Env: func(k string) string { return map[string]string{"TOKEN": "s3cret"}[k] },
		HTTPClient: streamable.Client()})
	headers := map[string]string{"Authorization": "Bearer ${env:TOKEN}"}
	tools, warns := m.Tools(context.Background(), "a", "", []Server{
		{Name: "h", Transport: TransportHTTP, URL: streamable.URL, Headers: headers},
		{Name: "e", Transport: TransportSSE, URL: sse.URL, Headers: headers},
	})
	require.Empty(t, warns)
	for _, name := range []string{"h__echo", "e__echo"} {
		res, err := run(t, find(t, tools, name), `{"text":"over http"}`)
		require.NoError(t, err, name)
		assert.JSONEq(t, `{"echoed":"over http","length":9}`, res.Content)
	}
	res, err := run(t, find(t, tools, "h__resources"), `{"action":"read","uri":"test://hello"}`)
	require.NoError(t, err)
	assert.Equal(t, "hello world", res.Content)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, auth)
	for _, a := range auth {
		assert.Equal(t, "Bearer s3cret", a, "every request carries the expanded header")
	}
}

func TestTools_BadEntriesWarn(t *testing.T) {
	m := newManager(t, Options{})
	tools, warns := m.Tools(context.Background(), "a", "", []Server{
		{Name: "x", Transport: TransportHTTP, URL: "file:///etc/passwd"},
		{Name: "y"},
		{Name: "z", Transport: TransportStdio, Command: "/nonexistent"},
	})
	assert.Empty(t, tools)
	require.Len(t, warns, 3)
	assert.Contains(t, warns[0], "not an http(s) URL")
	assert.Contains(t, warns[1], "has no command")
	assert.Contains(t, warns[2], "cannot run stdio servers")
}

func TestNamer(t *testing.T) {
	n := newNamer()
	assert.Equal(t, "a_b__c_d", n.unique("a.b__c d"))
	assert.Equal(t, "a_b__c_d_2", n.unique("a b__c.d"))
	long := strings.Repeat("x", 100)
	assert.Len(t, n.unique(long), 64)
	assert.Equal(t, strings.Repeat("x", 62)+"_2", n.unique(long))
}

func TestExpand(t *testing.T) {
	env := func(k string) string { return map[string]string{"A": "1", "B": "2"}[k] }
	assert.Equal(t, "1-2-1-", expand("${env:A}-$B-${A}-$NONE", env))
}
