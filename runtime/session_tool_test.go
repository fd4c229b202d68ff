package runtime_test

import (
	"context"
	"strings"
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

// The session tool shows a session only the sessions of its own principal
// (issue 34): a Telegram user's turn neither lists nor reads another
// user's chat, nor the owner's; a later session of the same user reads
// the first one. The sessions are told apart by their gateway and chat,
// as the daemon's chats are.
func TestSessionTool_OnlyThePrincipalsSessions(t *testing.T) {
	var target atomic.Value
	target.Store("")
	h := newHarness(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" || !strings.HasPrefix(r.LastUser(), "peek") {
			return llmtest.Reply{Text: "ok"}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "l", Name: "session", Arguments: `{"action":"list"}`},
			{ID: "r", Name: "session", Arguments: `{"action":"read","session_id":"` + target.Load().(string) + `"}`},
		}}
	})
	h.agent.Tools = append(h.agent.Tools, tools.Session{Store: dbSessions{h.store}})
	chat := func(gateway, chatID string) string {
		info, err := h.loop.CreateSession(context.Background(), runtime.NewSession{Agent: "assistant", Gateway: gateway, ChatID: chatID})
		require.NoError(t, err)
		return info.ID
	}
	alice := chat("telegram", "111")
	h.turn(alice, "my PIN is 4321")
	owner := chat("http", "")
	h.turn(owner, "the safe code is 8642")

	results := func(evs []runtime.Event) (list, read runtime.Event) {
		for _, e := range find(evs, runtime.EvToolResult) {
			switch e.CallID {
			case "l":
				list = e
			case "r":
				read = e
			}
		}
		return list, read
	}
	bob := chat("telegram", "222")
	for _, victim := range []string{alice, owner} {
		target.Store(victim)
		list, read := results(h.turn(bob, "peek"))
		assert.NotContains(t, list.Content, alice, "bob does not list alice's chat")
		assert.NotContains(t, list.Content, owner, "nor the owner's")
		assert.False(t, read.Success, "bob cannot read %s", victim)
		assert.Contains(t, read.Content, "another person's conversation")
		assert.NotContains(t, read.Content, "4321")
		assert.NotContains(t, read.Content, "8642")
	}

	target.Store(alice)
	again := chat("telegram", "111") // alice's next session (/new)
	list, read := results(h.turn(again, "peek"))
	assert.Contains(t, list.Content, alice, "alice lists her own earlier chat")
	assert.NotContains(t, list.Content, owner)
	assert.NotContains(t, list.Content, bob)
	assert.True(t, read.Success, read.Content)
	assert.Contains(t, read.Content, "my PIN is 4321", "and reads it")
}
