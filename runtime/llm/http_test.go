package llm

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A model request's body reaches the server whole, and the transport no
// longer allocates a copy buffer the size of each body: measured against
// a plain transport on the same server, each request costs at least 16 KiB
// less for a 24 KiB body (not under the race detector, whose pools drop
// buffers at random).
func TestTransport_CopiesBodiesThroughAPooledBuffer(t *testing.T) {
	want := bytes.Repeat([]byte("0123456789abcdef"), 24<<10/16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, err := io.ReadAll(r.Body)
		if err != nil || !bytes.Equal(got, want) {
			http.Error(w, "body damaged", http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	perRequest := func(c *http.Client) float64 {
		send := func() {
			b := NewBody()
			b.B = append(b.B, want...)
			req, err := b.Request(http.MethodPost, srv.URL)
			require.NoError(t, err)
			resp, err := c.Do(req)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			b.Release()
			require.Equal(t, http.StatusOK, resp.StatusCode)
		}
		send() // the connection and the pools
		const n = 20
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			send()
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / n
	}
	ours := NewHTTPClient(0)
	defer ours.CloseIdleConnections()
	plain := &http.Client{Transport: &http.Transport{}}
	defer plain.CloseIdleConnections()
	a, b := perRequest(ours), perRequest(plain)
	if raceEnabled {
		return
	}
	t.Logf("bytes allocated per request: %.0f with NewTransport, %.0f with a plain one", a, b)
	assert.Less(t, a, b-16<<10)
}
