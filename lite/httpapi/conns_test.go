package httpapi_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// connWatch follows every connection's state, keyed by the client's
// address, so a test waits for "these connections are idle" instead of
// sleeping.
type connWatch struct {
	mu      sync.Mutex
	states  map[string]http.ConnState
	changed chan struct{}
}

func newConnWatch() *connWatch {
	return &connWatch{states: map[string]http.ConnState{}, changed: make(chan struct{}, 1)}
}

func (w *connWatch) hook(c net.Conn, st http.ConnState) {
	w.mu.Lock()
	w.states[c.RemoteAddr().String()] = st
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// wait returns once each of conns (client ends) is in state st.
func (w *connWatch) wait(t testing.TB, st http.ConnState, conns ...net.Conn) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		w.mu.Lock()
		n := 0
		for _, c := range conns {
			if w.states[c.LocalAddr().String()] == st {
				n++
			}
		}
		w.mu.Unlock()
		if n == len(conns) {
			return
		}
		select {
		case <-w.changed:
		case <-timeout:
			t.Fatalf("%d of %d connections are %s", n, len(conns), st)
		}
	}
}

// idleConns opens n keep-alive connections from the address from, each
// idle after one answered request, as a browser or an attacker leaves
// them; each is idle before the next opens, so they idle in order.
func idleConns(t testing.TB, w *connWatch, from, addr string, n int) []*bufio.Reader {
	t.Helper()
	var out []*bufio.Reader
	for range n {
		c := dial(t, from, addr)
		br := bufio.NewReader(c)
		resp := exchange(t, c, br, "GET /livez HTTP/1.1", "Host: "+addr, "", "")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		_, _ = io.Copy(io.Discard, resp.Body)
		w.wait(t, http.StateIdle, c)
		out = append(out, br)
	}
	return out
}

// busyConns opens n connections from the address from, each in the middle
// of a request: its headers sent, its body not, so its handler runs.
func busyConns(t testing.TB, w *connWatch, from, addr string, n int) []net.Conn {
	t.Helper()
	var out []net.Conn
	for range n {
		c := dial(t, from, addr)
		_, err := io.WriteString(c, "POST /api/v1/sessions HTTP/1.1\r\nHost: "+addr+
			"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		require.NoError(t, err)
		out = append(out, c)
	}
	w.wait(t, http.StateActive, out...)
	return out
}

// livez is a new client's request from the address from, on a connection
// the server has closed when livez returns (Connection: close), so the next
// client finds its place free.
func livez(t testing.TB, w *connWatch, from, addr string) *http.Response {
	t.Helper()
	c := dial(t, from, addr)
	resp := exchange(t, c, bufio.NewReader(c), "GET /livez HTTP/1.1", "Host: "+addr, "Connection: close", "", "")
	if resp.StatusCode != http.StatusServiceUnavailable { // a refused connection was never the server's
		w.wait(t, http.StateClosed, c)
	}
	return resp
}

// closed reports whether the server closed the connection behind br (a
// connection left open fails the test at its deadline).
func closed(br *bufio.Reader) bool {
	_, err := br.ReadByte()
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// Idle keep-alive connections on the public /livez, as many as
// server.max_connections, from one address or from many, do not lock new
// clients out: the idlest is closed to make room, at once.
func TestConnLimits_IdleConnectionsMakeRoom(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	w := newConnWatch()
	addr := e.listen(httpapi.ConnLimits{Max: 8, PerClient: 4}, w.hook)

	held := idleConns(t, w, "127.0.0.2", addr, 4)
	held = append(held, idleConns(t, w, "127.0.0.3", addr, 4)...)
	start := time.Now()
	resp := livez(t, w, "127.0.0.4", addr)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Less(t, time.Since(start), 5*time.Second, "at once, not after an idle timeout")
	assert.True(t, closed(held[0]), "the idlest connection was closed to make room")
}

// One address cannot take every place: past server.max_connections_per_client
// its idle connections make room for it, and when all of them are busy it
// alone is refused, with a 503 that says why.
func TestConnLimits_PerClient(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	w := newConnWatch()
	addr := e.listen(httpapi.ConnLimits{Max: 100, PerClient: 2}, w.hook)

	held := idleConns(t, w, "127.0.0.2", addr, 2)
	assert.Equal(t, http.StatusOK, livez(t, w, "127.0.0.2", addr).StatusCode)
	assert.True(t, closed(held[0]), "its own idlest connection made room")

	busyConns(t, w, "127.0.0.5", addr, 2)
	p := requireProblem(t, livez(t, w, "127.0.0.5", addr), http.StatusServiceUnavailable, "service_unavailable")
	assert.Contains(t, p.Detail, "server.max_connections_per_client")
	assert.Equal(t, http.StatusOK, livez(t, w, "127.0.0.6", addr).StatusCode, "other addresses are served")
}

// When every connection is busy a new one is refused at once with a 503
// saying why; once a request ends and its connection idles, clients are
// served again.
func TestConnLimits_AllBusy(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	w := newConnWatch()
	addr := e.listen(httpapi.ConnLimits{Max: 2}, w.hook)

	busy := busyConns(t, w, "", addr, 2)
	p := requireProblem(t, livez(t, w, "", addr), http.StatusServiceUnavailable, "service_unavailable")
	assert.Contains(t, p.Detail, "server.max_connections")

	br := bufio.NewReader(busy[0])
	rest := `"agent":"assistant"}`
	resp := exchange(t, busy[0], br, rest+strings.Repeat(" ", 99-len(rest))) // the rest of the body
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	_, _ = io.Copy(io.Discard, resp.Body)
	w.wait(t, http.StateIdle, busy[0])
	assert.Equal(t, http.StatusOK, livez(t, w, "", addr).StatusCode)
}

// Event streams are counted apart: open streams take no place from
// requests, and past server.max_streams a new stream is refused with a 503
// while requests go on.
func TestConnLimits_StreamsCountedApart(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	w := newConnWatch()
	addr := e.listen(httpapi.ConnLimits{Max: 1, Streams: 2}, w.hook)
	stream := func() *http.Response {
		c := dial(t, "", addr)
		return exchange(t, c, bufio.NewReader(c), "GET /api/v1/sessions/"+sid+"/events HTTP/1.1", "Host: "+addr, "", "")
	}
	for range 2 {
		resp := stream()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.True(t, resp.Close, "a stream's connection does not go back to the requests")
	}
	for range 3 {
		assert.Equal(t, http.StatusOK, livez(t, w, "", addr).StatusCode, "streams take no place from requests")
	}
	p := requireProblem(t, stream(), http.StatusServiceUnavailable, "service_unavailable")
	assert.Contains(t, p.Detail, "server.max_streams")
}

// A connection that never sends a request (a browser's speculative one, or
// an attacker's) holds its place for a moment only: after a second of
// silence it counts as idle and makes room.
func TestConnLimits_SilentConnections(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	w := newConnWatch()
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	addr := e.listen(httpapi.ConnLimits{Max: 2, Now: func() time.Time { return time.Unix(0, now.Load()) }}, w.hook)

	c1, c2 := dial(t, "", addr), dial(t, "", addr)
	w.wait(t, http.StateNew, c1, c2)
	silent := []*bufio.Reader{bufio.NewReader(c1), bufio.NewReader(c2)}
	p := requireProblem(t, livez(t, w, "", addr), http.StatusServiceUnavailable, "service_unavailable")
	assert.Contains(t, p.Detail, "server.max_connections", "a client that just connected keeps its place")

	now.Add(int64(2 * time.Second))
	assert.Equal(t, http.StatusOK, livez(t, w, "", addr).StatusCode)
	assert.True(t, closed(silent[0]), "the silent connection made room")
}
