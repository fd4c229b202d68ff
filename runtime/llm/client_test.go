package llm_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// sleeps records backoff waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func newClient(base string, o llm.Options) *llm.Client {
	return llm.New(llm.Server{Provider: "ollama", Name: "Ollama", BaseURL: base, UnreachableHint: "start it"}, o)
}

func build(url string) func() (*http.Request, error) {
	return func() (*http.Request, error) {
		return http.NewRequest(http.MethodPost, url+"/api/chat", strings.NewReader(`{"model":"m","messages":[]}`))
	}
}

// drain reads all lines of s.
func drain(s *llm.Stream) (n int, err error) {
	defer s.Close()
	for {
		if _, err = s.ReadLine(); err != nil {
			return n, err
		}
		n++
	}
}

func TestClient_Do_RetriesThenSucceeds(t *testing.T) {
	srv := llmtest.NewOllama(t,
		llmtest.Reply{Status: 503},
		llmtest.Reply{Status: 429, RetryAfter: "2"},
		llmtest.Reply{Text: "ok"},
	)
	var sl sleeps
	c := newClient(srv.URL, llm.Options{Sleep: sl.sleep})
	s, err := c.Do(t.Context(), build(srv.URL))
	require.NoError(t, err)
	n, err := drain(s)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, 2, n, "one text chunk and the done chunk")
	require.Len(t, sl.d, 2)
	assert.LessOrEqual(t, sl.d[0], llm.DefaultBackoffBase, "first backoff is jittered within base")
	assert.Equal(t, 2*time.Second, sl.d[1], "Retry-After is honoured exactly")
	assert.Len(t, srv.Requests(), 3)
}

func TestClient_Do_GivesUp(t *testing.T) {
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		kind     runtime.ErrorKind
		requests int
	}{
		{"5xx until attempts run out", []llmtest.Reply{{Status: 500}, {Status: 502}, {Status: 500}}, runtime.ErrServer, 3},
		{"Retry-After beyond the cap", []llmtest.Reply{{Status: 429, RetryAfter: "3600"}}, runtime.ErrRateLimited, 1},
		{"400 is not retried", []llmtest.Reply{{Status: 400, ErrorMessage: "bad field"}}, runtime.ErrBadRequest, 1},
		{"501 is not retried", []llmtest.Reply{{Status: 501}}, runtime.ErrServer, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOllama(t, tt.replies...)
			var sl sleeps
			c := newClient(srv.URL, llm.Options{Sleep: sl.sleep, MaxAttempts: 3})
			_, err := c.Do(t.Context(), build(srv.URL))
			var pe *runtime.ProviderError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.kind, pe.Kind)
			assert.Len(t, srv.Requests(), tt.requests)
		})
	}
}

func TestClient_Do_Unreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	var sl sleeps
	c := newClient(url, llm.Options{Sleep: sl.sleep})
	_, err = c.Do(t.Context(), build(url))
	var pe *runtime.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, runtime.ErrUnreachable, pe.Kind)
	assert.Equal(t, "cannot reach Ollama at "+url+": start it", pe.Message)
	assert.Len(t, sl.d, llm.DefaultMaxAttempts-1)
}

func TestClient_Do_Timeouts(t *testing.T) {
	// Each case trips one timeout; the other is long, so that a slow
	// machine cannot trip it first.
	tests := []struct {
		name  string
		reply llmtest.Reply
		opts  llm.Options
		want  string
	}{
		{"first token", llmtest.Reply{Text: "a b", Fault: llmtest.Stall, FaultAfter: 0},
			llm.Options{FirstTokenTimeout: 50 * time.Millisecond, IdleTimeout: time.Minute}, "sent nothing for 50ms"},
		{"idle", llmtest.Reply{Text: "a b c", Fault: llmtest.Stall, FaultAfter: 2},
			llm.Options{FirstTokenTimeout: time.Minute, IdleTimeout: 50 * time.Millisecond}, "stopped sending for 50ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOllama(t, tt.reply)
			c := newClient(srv.URL, tt.opts)
			s, err := c.Do(t.Context(), build(srv.URL))
			require.NoError(t, err)
			_, err = drain(s)
			var pe *runtime.ProviderError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, runtime.ErrTimeout, pe.Kind)
			assert.Contains(t, pe.Message, tt.want)
		})
	}
}

func TestClient_Do_Dropped(t *testing.T) {
	srv := llmtest.NewOllama(t, llmtest.Reply{Text: "a b c", Fault: llmtest.Drop, FaultAfter: 1})
	s, err := newClient(srv.URL, llm.Options{}).Do(t.Context(), build(srv.URL))
	require.NoError(t, err)
	n, err := drain(s)
	assert.Equal(t, 1, n)
	assert.True(t, runtime.IsProviderError(err, runtime.ErrInterrupted), "%v", err)
}

func TestClient_Do_Cancel(t *testing.T) {
	t.Run("mid-stream", func(t *testing.T) {
		srv := llmtest.NewOllama(t, llmtest.Reply{Text: "a b", Fault: llmtest.Stall, FaultAfter: 1})
		ctx, cancel := context.WithCancel(t.Context())
		s, err := newClient(srv.URL, llm.Options{}).Do(ctx, build(srv.URL))
		require.NoError(t, err)
		_, err = s.ReadLine()
		require.NoError(t, err)
		cancel()
		_, err = drain(s)
		assert.ErrorIs(t, err, context.Canceled)
		var pe *runtime.ProviderError
		assert.False(t, errors.As(err, &pe))
	})
	t.Run("during backoff", func(t *testing.T) {
		srv := llmtest.NewOllama(t, llmtest.Reply{Status: 500})
		ctx, cancel := context.WithCancel(t.Context())
		c := newClient(srv.URL, llm.Options{Sleep: func(ctx context.Context, _ time.Duration) error {
			cancel()
			return ctx.Err()
		}})
		_, err := c.Do(ctx, build(srv.URL))
		assert.ErrorIs(t, err, context.Canceled)
	})
}
