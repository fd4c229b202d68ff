package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// What a chat is told at a turn's end: the answer, the tool-limit notice
// after it, or why the turn failed.
func TestAnswer(t *testing.T) {
	assert.Equal(t, "hi", answer("hi", "", "", runtime.TurnCompleted))
	assert.Equal(t, "partial\n\n⚠️ stopped using tools", answer("partial", "", "stopped using tools", runtime.TurnCompleted))
	assert.Equal(t, "the model is down", answer("", "the model is down", "", runtime.TurnFailed))
	assert.Equal(t, sayTurnFailed, answer("", "", "", runtime.TurnFailed))
	assert.Equal(t, "", answer("", "", "", runtime.TurnCancelled), "a cancelled turn with nothing said says nothing")
}
