package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// blockedTool ignores its context until released, as a read blocked
// opening a FIFO does.
type blockedTool struct{ release chan struct{} }

func (b *blockedTool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "blocked", Schema: []byte(`{"type":"object"}`)}
}
func (b *blockedTool) Deadline([]byte) time.Duration { return 50 * time.Millisecond }
func (b *blockedTool) Run(context.Context, []byte) (runtime.Result, error) {
	<-b.release
	return runtime.Result{Content: "too late"}, nil
}

// A tool that ignores its deadline does not hold the turn, or the tool
// slot, forever: its call fails and the turn goes on.
func TestLoop_StuckToolDoesNotHoldTheTurn(t *testing.T) {
	h := newHarness(t, llmtest.Script(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "blocked", Arguments: `{}`}}},
		llmtest.Reply{Text: "moving on"},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: `{"path":"notes.txt"}`}}},
		llmtest.Reply{Text: "done"},
	))
	tool := &blockedTool{release: make(chan struct{})}
	defer close(tool.release)
	h.agent.Tools = append(h.agent.Tools, tool)
	h.opts.MaxTools = 1
	h.restart() // with one tool slot, which the stuck call held
	sid := h.session()

	evs := h.turn(sid, "call the blocked tool")
	results := find(evs, runtime.EvToolResult)
	require.Len(t, results, 1)
	assert.False(t, results[0].Success)
	assert.Contains(t, results[0].Content, "the tool did not stop in time")
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	assert.EqualValues(t, 1, h.loop.StuckTools())

	evs = h.turn(sid, "now read the notes")
	results = find(evs, runtime.EvToolResult)
	require.Len(t, results, 1)
	assert.Equal(t, "buy milk", results[0].Content, "the freed slot runs the next call")

	h.close() // shutting down does not wait for the stuck goroutine
	assert.EqualValues(t, 1, h.loop.StuckTools())
}
