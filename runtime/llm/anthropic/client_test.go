package anthropic

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

type recorder struct {
	mu     sync.Mutex
	text   []string
	think  []string
	sleeps []time.Duration
}

func (r *recorder) delta(d runtime.Delta) {
	if d.Text != "" {
		r.text = append(r.text, d.Text)
	}
	if d.Thinking != "" {
		r.think = append(r.think, d.Thinking)
	}
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.sleeps = append(r.sleeps, d)
	r.mu.Unlock()
	return ctx.Err()
}

const testKey = "sk-ant-test-0123456789abcdef"

// newTestClient talks to srv. idle is the idle timeout for the tests of a
// stall; 0 means one long enough that a loaded machine never trips it.
func newTestClient(srv *llmtest.Server, rec *recorder, idle time.Duration) *Client {
	if idle == 0 {
		idle = time.Minute
	}
	return New(Options{BaseURL: srv.BaseURL(), APIKey: testKey, KeyEnv: "ANTHROPIC_API_KEY",
		HTTP: llm.Options{Sleep: rec.sleep, IdleTimeout: idle}})
}

func simpleRequest() *runtime.Request {
	return &runtime.Request{Model: "claude-sonnet-4-20250514", Messages: []runtime.Message{{Role: runtime.RoleUser, Content: "hi"}}}
}

var weather = runtime.ToolSpec{Name: "get_weather", Description: "Weather",
	Schema: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

func TestClient_Stream_TextThinkingUsage(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{
		Text: "Hello there, friend.", Chunks: 3, Thinking: "be nice", Signature: "sig-1",
		Usage: llmtest.Usage{Prompt: 3000, Completion: 6, CacheRead: 2500, CacheWrite: 400},
	})
	rec := &recorder{}
	resp, err := newTestClient(srv, rec, 0).Stream(t.Context(), simpleRequest(), rec.delta)
	require.NoError(t, err)
	assert.Equal(t, []string{"Hello ", "there, ", "friend."}, rec.text)
	assert.Equal(t, []string{"be ", "nice"}, rec.think)
	assert.Equal(t, "Hello there, friend.", resp.Message.Content, "thinking stays out of the answer")
	assert.Equal(t, []runtime.ThinkingBlock{{Text: "be nice", Signature: "sig-1"}}, resp.Message.Thinking)
	assert.Equal(t, runtime.Usage{PromptTokens: 3000, CompletionTokens: 6, CacheReadTokens: 2500, CacheWriteTokens: 400}, resp.Usage)
	assert.Equal(t, "end_turn", resp.StopReason)

	got := srv.Requests()[0]
	assert.Equal(t, "/v1/messages", got.Path)
	assert.Equal(t, testKey, got.Header.Get("x-api-key"))
	assert.Equal(t, "2023-06-01", got.Header.Get("anthropic-version"))
	assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
	assert.True(t, got.Stream)
	assert.Equal(t, 8192, got.MaxTokens, "max_tokens is required: a default per model")
	assert.Nil(t, got.Temperature, "temperature only when set")
	assert.NotContains(t, string(got.Raw), `"system"`)
}

func TestClient_Stream_ToolUseSplitMidToken(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{
		Text: "Let me look.",
		ToolCalls: []llmtest.ToolCall{
			{ID: "toolu_a", Name: "get_weather", Arguments: `{"city": "Paris", "note": "a \"quoted\" {brace} é"}`},
			{Name: "read_file", Arguments: `{"path":"x.txt"}`},
		},
		ArgChunks: 9,
	})
	rec := &recorder{}
	resp, err := newTestClient(srv, rec, 0).Stream(t.Context(), simpleRequest(), rec.delta)
	require.NoError(t, err)
	assert.Equal(t, "Let me look.", resp.Message.Content)
	assert.Equal(t, []runtime.ToolCall{
		{ID: "toolu_a", Name: "get_weather", Arguments: `{"city": "Paris", "note": "a \"quoted\" {brace} é"}`},
		{ID: "toolu_llmtest_2", Name: "read_file", Arguments: `{"path":"x.txt"}`},
	}, resp.Message.ToolCalls)
	assert.Equal(t, "tool_use", resp.StopReason)
}

func TestClient_Stream_MaxTokensInToolCall(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{StopReason: "max_tokens",
		ToolCalls: []llmtest.ToolCall{{Name: "write_file", Arguments: `{"path":"a.txt","content":"long text"}`}}})
	_, err := newTestClient(srv, &recorder{}, 0).Stream(t.Context(), simpleRequest(), nil)
	var pe *runtime.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, runtime.ErrBadRequest, pe.Kind)
	assert.Contains(t, pe.Message, `a call to the tool "write_file", so the call was not run`)
}

func TestClient_Stream_Errors(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		kind  runtime.ErrorKind
		msg   string
	}{
		{"bad key", llmtest.Reply{Status: 401, ErrorMessage: "invalid x-api-key " + testKey},
			runtime.ErrAuth, "rejected the API key (401: invalid x-api-key [redacted]): set ANTHROPIC_API_KEY"},
		{"forbidden", llmtest.Reply{Status: 403}, runtime.ErrAuth, "(403: forbidden): set ANTHROPIC_API_KEY"},
		{"model not found", llmtest.Reply{Status: 404, ErrorMessage: "model: claude-9"},
			runtime.ErrModelNotFound, `has no model "claude-sonnet-4-20250514": check spec.model.name`},
		{"wrong base url", llmtest.Reply{Status: 404, Body: "Not Found"}, runtime.ErrBadRequest, "has no /v1/messages endpoint"},
		{"bad request", llmtest.Reply{Status: 400, ErrorMessage: "messages.1.content.0.type: Expected `thinking`"},
			runtime.ErrBadRequest, "rejected the request (400: messages.1.content.0.type: Expected `thinking`)"},
		{"overloaded mid-stream", llmtest.Reply{Text: "a b", Fault: llmtest.StreamError, FaultAfter: 3},
			runtime.ErrServer, "is overloaded and stopped mid-answer"},
		{"stall", llmtest.Reply{Text: "a b c", Fault: llmtest.Stall, FaultAfter: 3}, runtime.ErrTimeout, "stopped sending for 100ms"},
		{"drop", llmtest.Reply{Text: "a b c", Fault: llmtest.Drop, FaultAfter: 3}, runtime.ErrInterrupted, "broke off mid-answer"},
		{"no message_stop, no stop_reason", llmtest.Reply{Text: "a b c", Fault: llmtest.Truncate, FaultAfter: 4},
			runtime.ErrInterrupted, "broke off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropic(t, tt.reply)
			var idle time.Duration
			if tt.reply.Fault == llmtest.Stall {
				idle = 100 * time.Millisecond
			}
			_, err := newTestClient(srv, &recorder{}, idle).Stream(t.Context(), simpleRequest(), nil)
			var pe *runtime.ProviderError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.kind, pe.Kind)
			assert.Contains(t, pe.Message, tt.msg)
			assert.Equal(t, "anthropic", pe.Provider)
			assert.NotContains(t, pe.Message, testKey)
			assert.NotContains(t, fmt.Sprint(pe.Err), testKey)
		})
	}
}

// 529 (overloaded) and 429 with retry-after go through the shared retry
// layer; the third attempt succeeds.
func TestClient_Stream_Retries(t *testing.T) {
	srv := llmtest.NewAnthropic(t,
		llmtest.Reply{Status: 529},
		llmtest.Reply{Status: 429, RetryAfter: "3", ErrorMessage: "Number of request tokens has exceeded your per-minute rate limit"},
		llmtest.Reply{Text: "done"},
	)
	rec := &recorder{}
	resp, err := newTestClient(srv, rec, 0).Stream(t.Context(), simpleRequest(), rec.delta)
	require.NoError(t, err)
	assert.Equal(t, "done", resp.Message.Content)
	require.Len(t, rec.sleeps, 2)
	assert.Equal(t, 3*time.Second, rec.sleeps[1])
}

func TestClient_Stream_OverloadedGivesUp(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Status: 529}, llmtest.Reply{Status: 529})
	c := New(Options{BaseURL: srv.BaseURL(), HTTP: llm.Options{MaxAttempts: 2, Sleep: (&recorder{}).sleep}})
	_, err := c.Stream(t.Context(), simpleRequest(), nil)
	var pe *runtime.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, runtime.ErrServer, pe.Kind)
	assert.Equal(t, "Anthropic-compatible server at "+srv.URL+" is overloaded (529: Overloaded): try again in a few minutes", pe.Message)
}

// Ollama's Anthropic-compatible endpoint: base URL with or without /v1,
// no key, no x-api-key header.
func TestClient_Stream_BaseURLWithV1NoKey(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "a"}, llmtest.Reply{Text: "b"})
	for _, base := range []string{srv.URL + "/v1/", srv.URL} {
		resp, err := New(Options{BaseURL: base}).Stream(t.Context(), simpleRequest(), nil)
		require.NoError(t, err)
		assert.NotEmpty(t, resp.Message.Content)
	}
	for _, r := range srv.Requests() {
		assert.Equal(t, "/v1/messages", r.Path)
		assert.Empty(t, r.Header.Get("x-api-key"))
	}
}

func TestClient_Stream_Cancel(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "one two three", Fault: llmtest.Stall, FaultAfter: 4})
	ctx, cancel := context.WithCancel(t.Context())
	_, err := New(Options{BaseURL: srv.BaseURL()}).Stream(ctx, simpleRequest(), func(runtime.Delta) { cancel() })
	assert.ErrorIs(t, err, context.Canceled)
}

func TestClient_Stream_Echo(t *testing.T) {
	srv := llmtest.NewHandler(t, llmtest.Anthropic, llmtest.Echo())
	c := New(Options{BaseURL: srv.BaseURL()})
	req := simpleRequest()
	req.Tools = []runtime.ToolSpec{{Name: "clock"}}
	req.Messages = []runtime.Message{{Role: runtime.RoleUser, Content: `please use clock {"tz":"UTC"}`}}
	resp, err := c.Stream(t.Context(), req, nil)
	require.NoError(t, err)
	require.Len(t, resp.Message.ToolCalls, 1)
	call := resp.Message.ToolCalls[0]
	assert.Equal(t, "clock", call.Name)
	assert.JSONEq(t, `{"tz":"UTC"}`, call.Arguments)

	req.Messages = append(req.Messages, resp.Message,
		runtime.Message{Role: runtime.RoleTool, ToolCallID: call.ID, ToolName: "clock", Content: "12:00"})
	resp, err = c.Stream(t.Context(), req, nil)
	require.NoError(t, err)
	assert.Equal(t, "clock said: 12:00", resp.Message.Content)
}
