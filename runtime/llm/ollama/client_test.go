package ollama

import (
	"context"
	"encoding/json"
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

// recorder collects deltas and backoff sleeps.
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

// newTestClient talks to srv. idle is the idle timeout for the tests of a
// stall; 0 means one long enough that a loaded machine never trips it.
func newTestClient(srv *llmtest.Server, rec *recorder, idle time.Duration) *Client {
	if idle == 0 {
		idle = time.Minute
	}
	return New(Options{BaseURL: srv.BaseURL(), HTTP: llm.Options{
		Sleep:             rec.sleep,
		FirstTokenTimeout: 5 * time.Second,
		IdleTimeout:       idle,
	}})
}

func simpleRequest() *runtime.Request {
	return &runtime.Request{Model: "qwen3:4b", Messages: []runtime.Message{{Role: runtime.RoleUser, Content: "hi"}}}
}

func TestClient_Stream_Text(t *testing.T) {
	srv := llmtest.NewOllama(t, llmtest.Reply{
		Text: "Hello there, friend.", Chunks: 4, Thinking: "greet them",
		Usage: llmtest.Usage{Prompt: 12, Completion: 5},
	})
	rec := &recorder{}
	temp := 0.2
	req := &runtime.Request{
		Model:  "qwen3:4b",
		System: "Be brief.\n\"Quoted\"",
		Messages: []runtime.Message{
			{Role: runtime.RoleUser, Content: "weather?"},
			{Role: runtime.RoleAssistant, ToolCalls: []runtime.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
			{Role: runtime.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: "18°C"},
		},
		Tools: []runtime.ToolSpec{
			{Name: "get_weather", Description: "Weather now", Schema: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
			{Name: "noop"},
		},
		Temperature: &temp, MaxOutputTokens: 256, ContextTokens: 8192, KeepAlive: "30m",
	}
	resp, err := newTestClient(srv, rec, 0).Stream(t.Context(), req, rec.delta)
	require.NoError(t, err)

	assert.Equal(t, []string{"Hello", " ther", "e, fr", "iend."}, rec.text)
	assert.Equal(t, []string{"greet ", "them"}, rec.think)
	assert.Equal(t, runtime.RoleAssistant, resp.Message.Role)
	assert.Equal(t, "Hello there, friend.", resp.Message.Content, "thinking stays out of the content")
	assert.Equal(t, runtime.Usage{PromptTokens: 12, CompletionTokens: 5}, resp.Usage)
	assert.Equal(t, "stop", resp.StopReason)

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	got := reqs[0]
	assert.Equal(t, "/api/chat", got.Path)
	assert.Equal(t, "qwen3:4b", got.Model)
	assert.True(t, got.Stream)
	require.Len(t, got.Messages, 4)
	assert.Equal(t, llmtest.Message{Role: "system", Content: req.System}, got.Messages[0])
	assert.Equal(t, []llmtest.ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}, got.Messages[2].ToolCalls)
	assert.Equal(t, llmtest.Message{Role: "tool", Content: "18°C", ToolName: "get_weather"}, got.Messages[3])
	assert.Equal(t, []string{"get_weather", "noop"}, got.ToolNames())
	assert.JSONEq(t, llm.EmptySchema, got.Tools[1].Parameters)
	require.NotNil(t, got.Temperature)
	assert.Equal(t, 0.2, *got.Temperature)
	assert.Equal(t, 256, got.MaxTokens)
	assert.Equal(t, 8192, got.NumCtx)
	assert.Equal(t, "30m", got.KeepAlive)
	assert.NotContains(t, string(got.Raw), `"think"`)
}

func TestClient_Stream_ToolCalls(t *testing.T) {
	srv := llmtest.NewOllama(t, llmtest.Reply{
		Text: "Checking.",
		ToolCalls: []llmtest.ToolCall{
			{Name: "get_weather", Arguments: `{"city": "Paris", "days": [1, 2]}`},
			{ID: "call_abc", Name: "read_file", Arguments: `{"path":"a \"b\".txt"}`},
		},
	})
	rec := &recorder{}
	resp, err := newTestClient(srv, rec, 0).Stream(t.Context(), simpleRequest(), rec.delta)
	require.NoError(t, err)
	calls := resp.Message.ToolCalls
	require.Len(t, calls, 2)
	assert.Regexp(t, `^call_[0-9a-z]+_1$`, calls[0].ID, "made-up id when Ollama sends none")
	assert.Equal(t, "get_weather", calls[0].Name)
	assert.JSONEq(t, `{"city":"Paris","days":[1,2]}`, calls[0].Arguments)
	assert.Equal(t, runtime.ToolCall{ID: "call_abc", Name: "read_file", Arguments: `{"path":"a \"b\".txt"}`}, calls[1])
	assert.Equal(t, "Checking.", resp.Message.Content)
}

func TestClient_Stream_TextFormToolCallPassesThrough(t *testing.T) {
	text := llmtest.TextToolCall("get_weather", `{"city":"Oslo"}`)
	srv := llmtest.NewOllama(t, llmtest.Reply{Text: text, Chunks: 5})
	rec := &recorder{}
	resp, err := newTestClient(srv, rec, 0).Stream(t.Context(), simpleRequest(), rec.delta)
	require.NoError(t, err)
	assert.Equal(t, text, resp.Message.Content)
	assert.Empty(t, resp.Message.ToolCalls)
	assert.Equal(t, text, strings.Join(rec.text, ""))
}

func TestClient_Stream_Errors(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		kind  runtime.ErrorKind
		msg   string
	}{
		{"model not found", llmtest.Reply{Status: 404, ErrorMessage: `model "qwen3:4b" not found, try pulling it first`},
			runtime.ErrModelNotFound, `Ollama has no model "qwen3:4b": run "ollama pull qwen3:4b"`},
		{"wrong path", llmtest.Reply{Status: 404, Body: "404 page not found"}, runtime.ErrBadRequest, "has no such endpoint"},
		{"unauthorized", llmtest.Reply{Status: 401, ErrorMessage: "unauthorized"}, runtime.ErrAuth, "rejected the credentials (401: unauthorized)"},
		{"bad request", llmtest.Reply{Status: 400, ErrorMessage: "invalid options"}, runtime.ErrBadRequest, "(400: invalid options)"},
		{"in-stream error", llmtest.Reply{Text: "a b", Fault: llmtest.StreamError, FaultAfter: 1, ErrorMessage: "out of memory"},
			runtime.ErrServer, "failed mid-answer (out of memory)"},
		{"stall", llmtest.Reply{Text: "a b c", Fault: llmtest.Stall, FaultAfter: 1}, runtime.ErrTimeout, "stopped sending for 100ms"},
		{"drop", llmtest.Reply{Text: "a b c", Fault: llmtest.Drop, FaultAfter: 2}, runtime.ErrInterrupted, "broke off mid-answer"},
		{"truncated", llmtest.Reply{Text: "a b c", Fault: llmtest.Truncate, FaultAfter: 2}, runtime.ErrInterrupted, "broke off mid-answer"},
		{"not ndjson", llmtest.Reply{Text: "a", Fault: llmtest.StreamError, FaultAfter: 0, ErrorMessage: "x"}, runtime.ErrServer, "(x)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOllama(t, tt.reply)
			rec := &recorder{}
			var idle time.Duration // the others must not trip it on a slow machine
			if tt.reply.Fault == llmtest.Stall {
				idle = 100 * time.Millisecond
			}
			_, err := newTestClient(srv, rec, idle).Stream(t.Context(), simpleRequest(), rec.delta)
			var pe *runtime.ProviderError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.kind, pe.Kind)
			assert.Equal(t, "ollama", pe.Provider)
			assert.Contains(t, pe.Message, tt.msg)
		})
	}
}

func TestClient_Stream_Retries(t *testing.T) {
	srv := llmtest.NewOllama(t,
		llmtest.Reply{Status: 500, ErrorMessage: "llama runner process has terminated"},
		llmtest.Reply{Status: 429, RetryAfter: "7"},
		llmtest.Reply{Text: "fine"},
	)
	rec := &recorder{}
	resp, err := newTestClient(srv, rec, 0).Stream(t.Context(), simpleRequest(), rec.delta)
	require.NoError(t, err)
	assert.Equal(t, "fine", resp.Message.Content)
	require.Len(t, rec.sleeps, 2)
	assert.Equal(t, 7*time.Second, rec.sleeps[1])
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, reqs[0].Raw, reqs[2].Raw, "every attempt sends the same body")
}

func TestClient_Stream_Cancel(t *testing.T) {
	srv := llmtest.NewOllama(t, llmtest.Reply{Text: "one two three", Fault: llmtest.Stall, FaultAfter: 1})
	ctx, cancel := context.WithCancel(t.Context())
	c := New(Options{BaseURL: srv.BaseURL()})
	_, err := c.Stream(ctx, simpleRequest(), func(runtime.Delta) { cancel() })
	assert.ErrorIs(t, err, context.Canceled)
}

func TestClient_Stream_Unreachable(t *testing.T) {
	srv := llmtest.NewOllama(t)
	url := srv.BaseURL()
	srv.Close()
	rec := &recorder{}
	_, err := New(Options{BaseURL: url, HTTP: llm.Options{MaxAttempts: 1}}).Stream(t.Context(), simpleRequest(), rec.delta)
	var pe *runtime.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, runtime.ErrUnreachable, pe.Kind)
	assert.Equal(t, `cannot reach Ollama at `+url+`: start it with "ollama serve" or set spec.model.base_url in the agent's agent.yaml`, pe.Message)
}

func TestEncodeRequest_IsValidJSON(t *testing.T) {
	req := simpleRequest()
	req.Messages = append(req.Messages, runtime.Message{Role: runtime.RoleAssistant, Content: "\x00\u2028",
		ToolCalls: []runtime.ToolCall{{Name: "x", Arguments: "not json"}}})
	body, err := encodeRequest(nil, req)
	require.NoError(t, err)
	assert.True(t, json.Valid(body), "%s", body)
	assert.Contains(t, string(body), `"arguments":{}`)

	req.Tools = []runtime.ToolSpec{{Name: "bad", Schema: []byte(`[1]`)}}
	_, err = encodeRequest(nil, req)
	assert.ErrorContains(t, err, `tool "bad"`)
}

func TestDefaultBaseURL(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	assert.Equal(t, DefaultURL, DefaultBaseURL())
	t.Setenv("OLLAMA_HOST", "0.0.0.0:11434")
	assert.Equal(t, "http://0.0.0.0:11434", DefaultBaseURL())
	t.Setenv("OLLAMA_HOST", "https://gpu.lan:443/")
	assert.Equal(t, "https://gpu.lan:443", DefaultBaseURL())
}

// An Agnx agent.yaml names Ollama by its OpenAI-style URL (ending in /v1);
// a plain root works too. Both reach /api/chat, and a request without
// temperature or max_output_tokens sends neither.
func TestClient_BaseURL_Conventions(t *testing.T) {
	for _, suffix := range []string{"", "/", "/v1", "/v1/"} {
		t.Run("suffix "+suffix, func(t *testing.T) {
			srv := llmtest.NewOllama(t, llmtest.Reply{Text: "ok"})
			c := New(Options{BaseURL: srv.BaseURL() + suffix, HTTP: llm.Options{MaxAttempts: 1, IdleTimeout: time.Minute}})
			resp, err := c.Stream(t.Context(), simpleRequest(), func(runtime.Delta) {})
			require.NoError(t, err)
			assert.Equal(t, "ok", resp.Message.Content)
			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, "/api/chat", reqs[0].Path)
			assert.Nil(t, reqs[0].Temperature)
			assert.Zero(t, reqs[0].MaxTokens)
			assert.NotContains(t, string(reqs[0].Raw), `"options"`)
		})
	}
}
