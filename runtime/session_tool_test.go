package runtime_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
	"github.com/agnx-lite/agnx-lite/storage"
)

// dbSessions reads sessions from the store, as lite's does.
type dbSessions struct{ st *storage.Store }

func (d dbSessions) Sessions() ([]runtime.SessionInfo, error) { return runtime.ListSessions(d.st) }
func (d dbSessions) Events(id string, after uint64, fn func(runtime.Event) error) error {
	return runtime.ReadEvents(d.st, id, after, fn)
}

func TestSessionTool_ListAndRead(t *testing.T) {
	var other atomic.Value
	other.Store("")
	var step atomic.Int32
	h := newHarness(t, func(llmtest.RecordedRequest) llmtest.Reply {
		switch step.Add(1) {
		case 1:
			return llmtest.Reply{Text: "Hi! Noted: the door code is 4711."}
		case 2:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{Name: "Session", Arguments: `{"action":"list"}`},
				{Name: "session", Arguments: `{"action":"read","session_id":"` + other.Load().(string) + `","limit":1}`},
				{Name: "session", Arguments: `{"action":"read","session_id":"nope"}`},
			}}
		}
		return llmtest.Reply{Text: "done"}
	})
	h.agent.Tools = append(h.agent.Tools, tools.Session{Store: dbSessions{h.store}})
	a := h.session()
	other.Store(a)
	h.turn(a, "remember the door code 4711")
	b := h.session()
	evs := h.turn(b, "what was the door code?")
	got := map[string]runtime.Event{} // by the call's arguments: calls run in parallel
	calls := find(evs, runtime.EvToolCall)
	for _, r := range find(evs, runtime.EvToolResult) {
		for _, c := range calls {
			if c.CallID == r.CallID {
				got[c.Arguments] = r
			}
		}
	}
	require.Len(t, got, 3, "%+v", evs)
	assert.Regexp(t, `^Other sessions for agent 'assistant':\n- `+a+` \(\w*\) — active — just now\n$`, got[`{"action":"list"}`].Content,
		"the tool name's case does not matter; the calling session is not listed")
	assert.Equal(t, "[assistant]: Hi! Noted: the door code is 4711.\n",
		got[`{"action":"read","session_id":"`+a+`","limit":1}`].Content, "the last limit messages")
	nope := got[`{"action":"read","session_id":"nope"}`]
	assert.False(t, nope.Success)
	assert.Contains(t, nope.Content, "session 'nope' not found")
}
