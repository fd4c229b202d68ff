package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"
)

// Signed thinking reaches the history with its answer and survives a
// legacy checkpoint (one that holds the history) within the running
// exchange; an older exchange's thinking is not checkpointed. A failed tool result is marked as such.
func TestState_ThinkingAndFailedResults(t *testing.T) {
	think := []ThinkingBlock{{Text: "plan", Signature: "sig"}}
	s := &state{ID: "s1"}
	for _, e := range []Event{
		{Seq: 1, Type: EvSessionStart, Agent: "a"},
		{Seq: 2, Type: EvUserMessage, Content: "hi"},
		{Seq: 3, Type: EvAssistant, Thinking: think, ToolCalls: []ToolCall{{ID: "c1", Name: "t"}},
			Usage: Usage{PromptTokens: 10, CacheReadTokens: 8}},
		{Seq: 4, Type: EvToolResult, CallID: "c1", Content: "boom", Success: false},
	} {
		s.apply(&e)
	}
	require.Len(t, s.History, 3)
	assert.Equal(t, think, s.History[1].Thinking)
	assert.True(t, s.History[2].IsError)
	assert.Equal(t, 8, s.Usage.CacheReadTokens)

	assert.NotContains(t, string(s.encodeCheckpoint(nil)), "boom", "a checkpoint holds no history: load replays it")
	s.WindowSeq = 0 // a legacy session's checkpoints carry the history
	var p fastjson.Parser
	cp, err := decodeCheckpoint(&p, s.encodeCheckpoint(nil))
	require.NoError(t, err)
	assert.Equal(t, s.History, cp.History, "the running exchange keeps its thinking")
	assert.Equal(t, 8, cp.Usage.CacheReadTokens)

	for _, e := range []Event{
		{Seq: 5, Type: EvTurnEnd, Reason: TurnCompleted},
		{Seq: 6, Type: EvUserMessage, Content: "again"},
	} {
		s.apply(&e)
	}
	cp, err = decodeCheckpoint(&p, s.encodeCheckpoint(nil))
	require.NoError(t, err)
	assert.Nil(t, cp.History[1].Thinking, "an earlier exchange's thinking is not checkpointed")
	assert.True(t, cp.History[2].IsError)
}
