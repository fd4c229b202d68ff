package openai

import (
	"context"
	"encoding/json"
	"fmt"
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

const testKey = "sk-test-0123456789abcdef"

// newTestClient talks to srv. idle is the idle timeout for the tests of a
// stall; 0 means one long enough that a loaded machine never trips it.
func newTestClient(srv *llmtest.Server, rec *recorder, idle time.Duration) *Client {
	if idle == 0 {
		idle = time.Minute
	}
	return New(Options{
		BaseURL: srv.BaseURL(), APIKey: testKey, KeyEnv: "OPENAI_API_KEY",
		Headers: map[string]string{"X-Title": "agnx-lite"},
		HTTP:    llm.Options{Sleep: rec.sleep, IdleTimeout: idle},
	})
}

func simpleRequest() *runtime.Request {
	return &runtime.Request{Model: "gpt-4o-mini", Messages: []runtime.Message{{Role: runtime.RoleUser, Content: "hi"}}}
}

func TestClient_Stream_Text(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Reply{
		Text: "Hello there, friend.", Chunks: 3, Thinking: "be nice",
		Usage: llmtest.Usage{Prompt: 30, Completion: 6},
	})
	rec := &recorder{}
	temp := 0.0
	req := &runtime.Request{
		Model:  "gpt-4o-mini",
		System: "You are terse.",
		Messages: []runtime.Message{
			{Role: runtime.RoleUser, Content: "weather in Paris?"},
			{Role: runtime.RoleAssistant, ToolCalls: []runtime.ToolCall{{ID: "call_7", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
			{Role: runtime.RoleTool, ToolCallID: "call_7", ToolName: "get_weather", Content: "18°C"},
		},
		Tools:       []runtime.ToolSpec{{Name: "get_weather", Description: "Weather", Schema: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}},
		Temperature: &temp, MaxOutputTokens: 100, ContextTokens: 4096, KeepAlive: "5m",
	}
	resp, err := newTestClient(srv, rec, 0).Stream(t.Context(), req, rec.delta)
	require.NoError(t, err)

	assert.Equal(t, []string{"Hello ", "there, ", "friend."}, rec.text)
	assert.Equal(t, []string{"be ", "nice"}, rec.think)
	assert.Equal(t, "Hello there, friend.", resp.Message.Content, "thinking stays out of the content")
	assert.Equal(t, runtime.Usage{PromptTokens: 30, CompletionTokens: 6}, resp.Usage, "from the usage-only chunk")
	assert.Equal(t, "stop", resp.StopReason)

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	got := reqs[0]
	assert.Equal(t, "/v1/chat/completions", got.Path)
	assert.Equal(t, "Bearer "+testKey, got.Header.Get("Authorization"))
	assert.Equal(t, "agnx-lite", got.Header.Get("X-Title"))
	assert.True(t, got.Stream)
	assert.True(t, got.IncludeUsage)
	require.Len(t, got.Messages, 4)
	assert.Equal(t, llmtest.Message{Role: "system", Content: "You are terse."}, got.Messages[0])
	assert.Equal(t, []llmtest.ToolCall{{ID: "call_7", Name: "get_weather", Arguments: `{"city":"Paris"}`}}, got.Messages[2].ToolCalls)
	assert.Contains(t, string(got.Raw), `"content":null`, "empty assistant content with tool calls is null")
	assert.Equal(t, llmtest.Message{Role: "tool", Content: "18°C", ToolCallID: "call_7"}, got.Messages[3])
	assert.Equal(t, []string{"get_weather"}, got.ToolNames())
	require.NotNil(t, got.Temperature)
	assert.Equal(t, 0.0, *got.Temperature)
	assert.Equal(t, 100, got.MaxTokens)
	assert.NotContains(t, string(got.Raw), "num_ctx")
	assert.NotContains(t, string(got.Raw), "keep_alive")
}

func TestClient_Stream_ToolCallFragments(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Reply{
		ToolCalls: []llmtest.ToolCall{
			{ID: "call_a", Name: "get_weather", Arguments: `{"city": "Paris", "note": "a \"quoted\" {brace}"}`},
			{Name: "read_file", Arguments: `{"path":"x.txt"}`},
		},
		ArgChunks: 7,
	})
	rec := &recorder{}
	resp, err := newTestClient(srv, rec, 0).Stream(t.Context(), simpleRequest(), rec.delta)
	require.NoError(t, err)
	assert.Equal(t, []runtime.ToolCall{
		{ID: "call_a", Name: "get_weather", Arguments: `{"city": "Paris", "note": "a \"quoted\" {brace}"}`},
		{ID: "call_2", Name: "read_file", Arguments: `{"path":"x.txt"}`},
	}, resp.Message.ToolCalls)
	assert.Equal(t, "tool_calls", resp.StopReason)
	assert.Empty(t, rec.text)
}

func TestClient_Stream_TextFormToolCallPassesThrough(t *testing.T) {
	text := "Sure.\n" + llmtest.TextToolCall("search", `{"q":"go"}`)
	srv := llmtest.NewOpenAI(t, llmtest.Reply{Text: text, Chunks: 6})
	rec := &recorder{}
	resp, err := newTestClient(srv, rec, 0).Stream(t.Context(), simpleRequest(), rec.delta)
	require.NoError(t, err)
	assert.Equal(t, text, resp.Message.Content)
	assert.Empty(t, resp.Message.ToolCalls)
}

func TestClient_Stream_Errors(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		kind  runtime.ErrorKind
		msg   string
	}{
		{"bad key", llmtest.Reply{Status: 401, ErrorMessage: "Incorrect API key provided: " + testKey},
			runtime.ErrAuth, "rejected the API key (401): set OPENAI_API_KEY"},
		{"forbidden", llmtest.Reply{Status: 403}, runtime.ErrAuth, "(403): set OPENAI_API_KEY"},
		{"model not found", llmtest.Reply{Status: 404, ErrorMessage: "The model `gpt-9` does not exist"},
			runtime.ErrModelNotFound, `has no model "gpt-4o-mini": check spec.model`},
		{"wrong base url", llmtest.Reply{Status: 404, Body: "Not Found"}, runtime.ErrBadRequest, "it usually ends in /v1"},
		{"bad request", llmtest.Reply{Status: 400, ErrorMessage: "max_tokens is too large"}, runtime.ErrBadRequest, "(400: max_tokens is too large)"},
		{"in-stream error", llmtest.Reply{Text: "a b", Fault: llmtest.StreamError, FaultAfter: 2, ErrorMessage: "upstream died"},
			runtime.ErrServer, "failed mid-answer (upstream died)"},
		{"stall", llmtest.Reply{Text: "a b c", Fault: llmtest.Stall, FaultAfter: 2}, runtime.ErrTimeout, "stopped sending for 100ms"},
		{"drop", llmtest.Reply{Text: "a b c", Fault: llmtest.Drop, FaultAfter: 2}, runtime.ErrInterrupted, "broke off mid-answer"},
		{"no DONE, no finish", llmtest.Reply{Text: "a b c", Fault: llmtest.Truncate, FaultAfter: 3}, runtime.ErrInterrupted, "broke off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, tt.reply)
			rec := &recorder{}
			var idle time.Duration // the others must not trip it on a slow machine
			if tt.reply.Fault == llmtest.Stall {
				idle = 100 * time.Millisecond
			}
			_, err := newTestClient(srv, rec, idle).Stream(t.Context(), simpleRequest(), rec.delta)
			var pe *runtime.ProviderError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.kind, pe.Kind)
			assert.Contains(t, pe.Message, tt.msg)
			assert.NotContains(t, pe.Message, testKey)
			assert.NotContains(t, fmt.Sprint(pe.Err), testKey)
		})
	}
}

func TestClient_Stream_FinishWithoutDone(t *testing.T) {
	// finish chunk sent, then the body ends before usage and [DONE].
	srv := llmtest.NewOpenAI(t, llmtest.Reply{Text: "ok", Fault: llmtest.Truncate, FaultAfter: 3})
	rec := &recorder{}
	resp, err := newTestClient(srv, rec, 0).Stream(t.Context(), simpleRequest(), rec.delta)
	require.NoError(t, err)
	assert.Equal(t, "ok", resp.Message.Content)
	assert.Equal(t, "stop", resp.StopReason)
}

func TestClient_Stream_Retries(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.Reply{Status: 502},
		llmtest.Reply{Status: 429, RetryAfter: "3", ErrorMessage: "Rate limit reached"},
		llmtest.Reply{Text: "done"},
	)
	rec := &recorder{}
	resp, err := newTestClient(srv, rec, 0).Stream(t.Context(), simpleRequest(), rec.delta)
	require.NoError(t, err)
	assert.Equal(t, "done", resp.Message.Content)
	require.Len(t, rec.sleeps, 2)
	assert.Equal(t, 3*time.Second, rec.sleeps[1])
}

func TestClient_Stream_NoKeyNoHeader(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Reply{Text: "local"}, llmtest.Reply{Status: 401})
	c := New(Options{BaseURL: srv.BaseURL(), Name: "llamacpp"})
	_, err := c.Stream(t.Context(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Empty(t, srv.Requests()[0].Header.Get("Authorization"))
	_, err = c.Stream(t.Context(), simpleRequest(), nil)
	var pe *runtime.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "llamacpp", pe.Provider)
	assert.Equal(t, "OpenAI-compatible server at "+srv.BaseURL()+" wants an API key (401): check the API key configured for this provider", pe.Message)
}

func TestClient_Stream_Cancel(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Reply{Text: "one two three", Fault: llmtest.Stall, FaultAfter: 2})
	ctx, cancel := context.WithCancel(t.Context())
	_, err := New(Options{BaseURL: srv.BaseURL()}).Stream(ctx, simpleRequest(), func(runtime.Delta) { cancel() })
	assert.ErrorIs(t, err, context.Canceled)
}

func TestClient_Stream_Echo(t *testing.T) {
	srv := llmtest.NewHandler(t, llmtest.OpenAI, llmtest.Echo())
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

func TestEncodeRequest_IsValidJSON(t *testing.T) {
	req := simpleRequest()
	req.System = "a\u2028b\xff"
	req.Messages = append(req.Messages, runtime.Message{Role: runtime.RoleAssistant, Content: "x",
		ToolCalls: []runtime.ToolCall{{ID: "1", Name: "f", Arguments: ""}}})
	body, err := encodeRequest(nil, req)
	require.NoError(t, err)
	require.True(t, json.Valid(body), "%s", body)
	assert.True(t, strings.Contains(string(body), `"arguments":"{}"`))
}

// An agent without temperature or max_output_tokens sends neither: the
// server's defaults apply, as with Agnx.
func TestClient_Stream_UnsetSettingsNotSent(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Reply{Text: "ok"})
	rec := &recorder{}
	_, err := newTestClient(srv, rec, 0).Stream(t.Context(), simpleRequest(), rec.delta)
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.NotContains(t, string(reqs[0].Raw), `"temperature"`)
	assert.NotContains(t, string(reqs[0].Raw), `"max_tokens"`)
}
