package httpapi_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// smallBuffers shrinks the kernel's socket buffers of accepted
// connections, so a client that does not read fills them quickly.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// dialNoRead opens a connection whose receive buffer is as small as the
// kernel allows, sends a GET of the session's events, reads the response
// headers and then never reads again.
func dialNoRead(t *testing.T, addr, sid string) (net.Conn, *bufio.Reader) {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024)
		})
	}}
	conn, err := d.DialContext(t.Context(), "tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = fmt.Fprintf(conn, "GET /api/v1/sessions/%s/events?events=all HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", sid)
	require.NoError(t, err)
	br := bufio.NewReaderSize(conn, 256)
	status, err := br.ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, status, "200")
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		if line == "\r\n" {
			return conn, br
		}
	}
}

// TestEvents_StalledSubscriberDoesNotStallOthers opens a stream that never
// reads, then runs two turns whose answers are long (600 tokens of 1 KiB
// each: more than the kernel's buffers and the subscriber's queue hold).
// The turns and the other clients finish; the stalled stream is dropped by
// the loop (it ends before the last done) and resumes without a gap.
//
// Two turns, because the kernel may still take a few bytes from a
// connection nobody reads (it compacts its receive queue), which can let
// one durable event through at the end of the first turn.
func TestEvents_StalledSubscriberDoesNotStallOthers(t *testing.T) {
	long := strings.Repeat(strings.Repeat("x", 1023)+" ", 600)
	flood := llmtest.Reply{Text: long, Chunks: 600}
	e := newAPIEnv(t, llmtest.Script(flood, flood))
	srv := httptest.NewUnstartedServer(e.api)
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)
	sid := e.session()
	stalled, br := dialNoRead(t, srv.Listener.Addr().String(), sid)

	for turn := range 2 {
		const others = 3
		got := make([][]sseEv, others)
		var wg sync.WaitGroup
		for i := range others {
			_, r := e.openStream(t.Context(), sid, fmt.Sprintf("?after=%d&until=turn_end", e.lastSeq(sid)))
			wg.Go(func() { got[i] = r.all() })
		}
		var answer struct{ Content, Status string }
		e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"talk a lot"}`, http.StatusOK, &answer)
		assert.Equal(t, "completed", answer.Status)
		assert.Len(t, answer.Content, len(long))
		wg.Wait()
		for i := range got {
			require.NotEmpty(t, got[i])
			ids := streamIDs(got[i])
			if got[i][len(got[i])-1].Name != "done" {
				// A reader that keeps up can still be dropped when a
				// burst of tokens fills its queue; it resumes, as
				// clients do.
				t.Logf("turn %d: client %d was dropped after %d events; it resumes", turn, i, len(got[i]))
				_, r := e.openStream(t.Context(), sid, fmt.Sprintf("?after=%d&until=turn_end", ids[len(ids)-1]))
				ids = append(ids, streamIDs(r.all())...)
			}
			assert.Equal(t, e.logSeqs(sid)[len(e.logSeqs(sid))-len(ids):], ids, "turn %d client %d", turn, i)
		}
	}

	// The stalled client reads now. Its queue kept room for the durable
	// events (tokens may fill only half of it), so it has them all, or it
	// was dropped and resumes with Last-Event-ID: either way, no gap.
	require.NoError(t, stalled.SetReadDeadline(time.Now().Add(5*time.Second)))
	scan := newSSEScan(httputil.NewChunkedReader(br))
	want := e.logSeqs(sid)
	var ids []uint64
	names := map[string]int{}
	for len(ids) < len(want) {
		ev, ok := scan.next()
		if !ok {
			break // dropped
		}
		names[ev.Name]++
		if ev.HasID {
			ids = append(ids, ev.ID)
		}
	}
	t.Logf("the stalled client got %v before reading again", names)
	if len(ids) < len(want) {
		var after uint64
		if len(ids) > 0 {
			after = ids[len(ids)-1]
		}
		_, r := e.openStream(t.Context(), sid, "", fmt.Sprintf("Last-Event-ID: %d", after))
		for len(ids) < len(want) {
			ev, ok := r.next()
			require.True(t, ok)
			if ev.HasID {
				ids = append(ids, ev.ID)
			}
		}
	}
	assert.Equal(t, want, ids, "no gap, no duplicate")
}
