package runtime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// A tool-call turn against the Messages API fake: the model thinks, calls
// two tools (one fails); the next request carries the signed thinking on
// the assistant message, both results in one user message with is_error on
// the failed one; cache usage adds up in the turn's usage and survives a
// restart.
func TestLoop_Anthropic(t *testing.T) {
	h := newHarnessKind(t, llmtest.Anthropic, llmtest.Script(
		llmtest.Reply{Thinking: "read the notes first", Signature: "sig-a", ArgChunks: 5,
			ToolCalls: []llmtest.ToolCall{
				{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"notes.txt"}`},
				{ID: "toolu_2", Name: "read_file", Arguments: `{"path":"../../etc/passwd"}`},
			},
			Usage: llmtest.Usage{Prompt: 2000, Completion: 40, CacheWrite: 1500}},
		llmtest.Reply{Text: "It says buy milk.", Chunks: 4, Usage: llmtest.Usage{Prompt: 2100, Completion: 6, CacheRead: 1500}},
	))
	sid := h.session()
	evs := h.turn(sid, "read my notes")
	assert.Equal(t, []runtime.EventType{runtime.EvUserMessage, runtime.EvAssistant, runtime.EvToolCall, runtime.EvToolCall,
		runtime.EvToolResult, runtime.EvToolResult, runtime.EvAssistant, runtime.EvTurnEnd}, types(evs))
	first := find(evs, runtime.EvAssistant)[0]
	assert.Empty(t, first.Content, "thinking never reaches the answer")
	assert.Equal(t, []runtime.ThinkingBlock{{Text: "read the notes first", Signature: "sig-a"}}, first.Thinking)
	assert.Equal(t, "It says buy milk.", tokens(evs))
	end := evs[len(evs)-1]
	assert.Equal(t, runtime.Usage{PromptTokens: 4100, CompletionTokens: 46, CacheReadTokens: 1500, CacheWriteTokens: 1500}, end.Usage)

	reqs := h.fake.Requests()
	require.Len(t, reqs, 2)
	second := reqs[1].Anthropic
	require.NotNil(t, second)
	require.Len(t, second.Messages, 3)
	a := second.Messages[1].Content
	require.Len(t, a, 3)
	assert.Equal(t, llmtest.AnthropicBlock{Type: "thinking", Thinking: "read the notes first", Signature: "sig-a"}, a[0])
	assert.Equal(t, "toolu_1", a[1].ID)
	results := second.Messages[2].Content
	require.Len(t, results, 2, "both results in one user message")
	byID := map[string]llmtest.AnthropicBlock{}
	for _, b := range results {
		byID[b.ToolUseID] = b
	}
	assert.Equal(t, "buy milk", byID["toolu_1"].Content.Text())
	assert.False(t, byID["toolu_1"].IsError)
	assert.True(t, byID["toolu_2"].IsError, "the failed call's result says so")
	assert.NotNil(t, results[1].CacheControl, "the conversation's end is a cache breakpoint")

	h.restart()
	info, err := h.loop.Session(t.Context(), sid)
	require.NoError(t, err)
	assert.Equal(t, 1500, info.Usage.CacheReadTokens, "cache usage is durable")
}
