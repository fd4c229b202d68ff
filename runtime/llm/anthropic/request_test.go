package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

var ephemeral = &llmtest.CacheControl{Type: "ephemeral"}

// shape sends req to a fake and returns the body it received.
func shape(t *testing.T, req *runtime.Request) *llmtest.AnthropicRequest {
	t.Helper()
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "ok"})
	_, err := New(Options{BaseURL: srv.BaseURL()}).Stream(t.Context(), req, nil)
	require.NoError(t, err)
	got := srv.Requests()[0].Anthropic
	require.NotNil(t, got)
	return got
}

// A tool loop's history: one assistant message with signed thinking, text
// and two calls; both results in ONE user message (one failed); a steering
// message joins them; a notice after the answer merges with it. The
// exchange is over ("thanks" opens the next), so its thinking is not sent
// (see TestEncodeRequest_Thinking).
func TestEncodeRequest_Shape(t *testing.T) {
	temp := 0.2
	req := &runtime.Request{
		Model: "claude-sonnet-4-20250514", System: "You are terse.", Temperature: &temp, MaxOutputTokens: 1000,
		Tools: []runtime.ToolSpec{weather, {Name: "clock"}},
		Messages: []runtime.Message{
			{Role: runtime.RoleUser, Content: "weather in Paris and the time?"},
			{Role: runtime.RoleAssistant, Content: "Checking.",
				Thinking: []runtime.ThinkingBlock{{Text: "two tools", Signature: "sig"}, {Text: "unsigned"}, {Redacted: "ENC"}},
				ToolCalls: []runtime.ToolCall{
					{ID: "t1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
					{ID: "t2", Name: "clock", Arguments: `{broken`},
				}},
			{Role: runtime.RoleTool, ToolCallID: "t1", ToolName: "get_weather", Content: "18°C"},
			{Role: runtime.RoleTool, ToolCallID: "t2", ToolName: "clock", Content: "bad arguments", IsError: true},
			{Role: runtime.RoleUser, Content: "also Berlin"},
			{Role: runtime.RoleAssistant, Content: "Paris 18°C."},
			{Role: runtime.RoleAssistant, Content: "(reminder fired)"},
			{Role: runtime.RoleUser, Content: "thanks"},
		},
	}
	got := shape(t, req)
	assert.Equal(t, 1000, got.MaxTokens)
	require.NotNil(t, got.Temperature)
	assert.Equal(t, 0.2, *got.Temperature)

	assert.Equal(t, llmtest.AnthropicContent{{Type: "text", Text: "You are terse.", CacheControl: ephemeral}}, got.System,
		"the system prompt ends the cached prefix")
	require.Len(t, got.Tools, 2)
	assert.Nil(t, got.Tools[1].CacheControl, "the system block after the tools carries the breakpoint")
	assert.JSONEq(t, string(weather.Schema), string(got.Tools[0].InputSchema))
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(got.Tools[1].InputSchema))

	require.Len(t, got.Messages, 5)
	roles := []string{}
	for _, m := range got.Messages {
		roles = append(roles, m.Role)
	}
	assert.Equal(t, []string{"user", "assistant", "user", "assistant", "user"}, roles, "roles alternate")

	a := got.Messages[1].Content
	require.Len(t, a, 3, "text, two tool_use; the finished exchange's thinking stays home")
	assert.Equal(t, "Checking.", a[0].Text)
	assert.Equal(t, "tool_use", a[1].Type)
	assert.JSONEq(t, `{"city":"Paris"}`, string(a[1].Input))
	assert.JSONEq(t, `{}`, string(a[2].Input), "garbled arguments go back as an empty object")

	u := got.Messages[2].Content
	require.Len(t, u, 3, "both results and the steering message in one user message")
	assert.Equal(t, "tool_result", u[0].Type)
	assert.Equal(t, "t1", u[0].ToolUseID)
	assert.Equal(t, "18°C", u[0].Content.Text())
	assert.False(t, u[0].IsError)
	assert.True(t, u[1].IsError)
	assert.Equal(t, "also Berlin", u[2].Text)

	assert.Equal(t, llmtest.AnthropicContent{{Type: "text", Text: "Paris 18°C."}, {Type: "text", Text: "(reminder fired)"}},
		got.Messages[3].Content, "the notice merges with the answer")
	last := got.Messages[4].Content
	assert.Equal(t, llmtest.AnthropicBlock{Type: "text", Text: "thanks", CacheControl: ephemeral}, last[len(last)-1],
		"the conversation's last block is a breakpoint")
	for _, m := range got.Messages[:4] {
		for _, b := range m.Content {
			assert.Nil(t, b.CacheControl)
		}
	}
}

// Without a system prompt the last tool ends the cached prefix.
func TestEncodeRequest_ToolsBreakpointWithoutSystem(t *testing.T) {
	req := simpleRequest()
	req.Tools = []runtime.ToolSpec{weather, {Name: "clock", Description: "Time"}}
	got := shape(t, req)
	assert.Nil(t, got.Tools[0].CacheControl)
	assert.Equal(t, ephemeral, got.Tools[1].CacheControl)
	assert.Empty(t, got.System)
}

// The last call of a turn that used all its rounds offers no tools: its
// history's calls and results travel as text, which the API accepts.
func TestEncodeRequest_NoToolsCallsAsText(t *testing.T) {
	req := simpleRequest()
	req.Model = "claude-3-haiku-20240307"
	req.Messages = append(req.Messages,
		runtime.Message{Role: runtime.RoleAssistant, ToolCalls: []runtime.ToolCall{{ID: "t1", Name: "clock", Arguments: `{}`}}},
		runtime.Message{Role: runtime.RoleTool, ToolCallID: "t1", ToolName: "clock", Content: "12:00"},
		runtime.Message{Role: runtime.RoleUser, Content: "answer now"})
	got := shape(t, req)
	assert.Equal(t, 4096, got.MaxTokens, "Claude 3 Haiku allows no more")
	assert.NotContains(t, string(mustJSON(t, got)), "tool_use")
	assert.NotContains(t, string(mustJSON(t, got)), "tool_result")
	assert.Equal(t, "[called tool clock with {}]", got.Messages[1].Content.Text())
	assert.Equal(t, "[result of tool clock]\n12:00\nanswer now", got.Messages[2].Content.Text())
}

// A history trimmed to start with the assistant gets a user message first.
func TestEncodeRequest_StartsWithUser(t *testing.T) {
	req := simpleRequest()
	req.Messages = []runtime.Message{{Role: runtime.RoleAssistant, Content: "notice"}, {Role: runtime.RoleUser, Content: "hi"}}
	got := shape(t, req)
	require.Len(t, got.Messages, 3)
	assert.Equal(t, "user", got.Messages[0].Role)
	assert.Equal(t, continued, got.Messages[0].Content.Text())
}

func TestEncodeRequest_IsValidJSON(t *testing.T) {
	req := simpleRequest()
	req.System = "a\u2028b\xff"
	req.Tools = []runtime.ToolSpec{{Name: "f"}}
	req.Messages = append(req.Messages, runtime.Message{Role: runtime.RoleAssistant, Content: "x\x00",
		ToolCalls: []runtime.ToolCall{{ID: "1", Name: "f", Arguments: ""}}},
		runtime.Message{Role: runtime.RoleTool, ToolCallID: "1", Content: ""})
	body, err := encodeRequest(nil, req)
	require.NoError(t, err)
	require.True(t, json.Valid(body), "%s", body)

	req.Tools = []runtime.ToolSpec{{Name: "bad", Schema: []byte(`[1]`)}}
	_, err = encodeRequest(nil, req)
	assert.ErrorContains(t, err, `tool "bad": schema is not a JSON object`)
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// Signed and redacted thinking go back first on their assistant message;
// an unsigned block (a compatible server's) cannot. Only the running
// exchange's thinking goes back: earlier exchanges' would cost input
// tokens for nothing.
func TestEncodeRequest_Thinking(t *testing.T) {
	signed := []runtime.ThinkingBlock{{Text: "t", Signature: "s"}}
	req := simpleRequest()
	req.Tools = []runtime.ToolSpec{{Name: "f"}}
	req.Messages = []runtime.Message{
		{Role: runtime.RoleUser, Content: "one"},
		{Role: runtime.RoleAssistant, Thinking: signed, ToolCalls: []runtime.ToolCall{{ID: "a", Name: "f", Arguments: "{}"}}},
		{Role: runtime.RoleTool, ToolCallID: "a", Content: "r"},
		{Role: runtime.RoleAssistant, Thinking: signed, Content: "answer one"},
		{Role: runtime.RoleUser, Content: "two"},
		{Role: runtime.RoleAssistant, Content: "Checking.", ToolCalls: []runtime.ToolCall{{ID: "b", Name: "f", Arguments: "{}"}},
			Thinking: []runtime.ThinkingBlock{{Text: "two tools", Signature: "sig"}, {Text: "unsigned"}, {Redacted: "ENC"}}},
		{Role: runtime.RoleTool, ToolCallID: "b", Content: "r"},
	}
	got := shape(t, req)
	var thinking []int
	for i, m := range got.Messages {
		for _, b := range m.Content {
			if b.Type == "thinking" || b.Type == "redacted_thinking" {
				thinking = append(thinking, i)
			}
		}
	}
	assert.Equal(t, []int{5, 5}, thinking, "only the running tool loop's assistant message")
	a := got.Messages[5].Content
	require.Len(t, a, 4)
	assert.Equal(t, llmtest.AnthropicBlock{Type: "thinking", Thinking: "two tools", Signature: "sig"}, a[0])
	assert.Equal(t, llmtest.AnthropicBlock{Type: "redacted_thinking", Data: "ENC"}, a[1])
	assert.Equal(t, "Checking.", a[2].Text)
	assert.Equal(t, "tool_use", a[3].Type)
}
