package llm

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Body goes back for reuse only once the caller released it and every
// reader the transport was given is closed, in either order.
func TestBody_ReusedOnlyWhenEveryHoldIsGone(t *testing.T) {
	b := NewBody()
	b.B = append(b.B, `{"a":1}`...)
	r := b.reader()
	b.Release()
	assert.Equal(t, int32(1), b.refs.Load(), "the transport's reader still holds it")
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(got))
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "a second Close does not release twice")
	assert.Equal(t, int32(0), b.refs.Load())
}

// The request carries the body with its length (no chunked encoding), and
// GetBody replays it.
func TestBody_Request(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		got = append(got, string(data))
		assert.Equal(t, int64(len(data)), r.ContentLength)
		assert.Empty(t, r.TransferEncoding)
	}))
	defer srv.Close()
	b := NewBody()
	defer b.Release()
	b.B = append(b.B, `{"model":"m"}`...)
	req, err := b.Request(http.MethodPost, srv.URL)
	require.NoError(t, err)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	again, err := req.GetBody()
	require.NoError(t, err)
	data, _ := io.ReadAll(again)
	again.Close()
	assert.Equal(t, []string{`{"model":"m"}`}, got)
	assert.Equal(t, `{"model":"m"}`, string(data))
}
