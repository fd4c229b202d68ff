package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"
)

// The rounds of the active turn are folded from its assistant answers,
// kept by checkpoints and reset by turn_end.
func TestState_RoundsFoldAndCheckpoint(t *testing.T) {
	s := &state{ID: "s1"}
	for _, e := range []Event{
		{Seq: 1, Type: EvSessionStart, Agent: "a"},
		{Seq: 2, Type: EvUserMessage, Content: "hi"},
		{Seq: 3, Type: EvAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "t"}}},
		{Seq: 4, Type: EvToolResult, CallID: "c1", Content: "ok"},
		{Seq: 5, Type: EvAssistant, ToolCalls: []ToolCall{{ID: "c2", Name: "t"}}},
	} {
		s.apply(&e)
	}
	assert.Equal(t, 2, s.Rounds)
	var p fastjson.Parser
	cp, err := decodeCheckpoint(&p, s.encodeCheckpoint(nil))
	require.NoError(t, err)
	assert.Equal(t, 2, cp.Rounds, "a checkpoint carries the count")

	end := Event{Seq: 6, Type: EvTurnEnd, Reason: TurnCompleted}
	s.apply(&end)
	assert.Zero(t, s.Rounds)
	assert.NotContains(t, string(s.encodeCheckpoint(nil)), `"rounds"`)
}
