package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

func askPolicy(t *testing.T, rules ...string) *agents.Policy {
	p := &agents.Policy{Mode: "ask"}
	for _, r := range rules {
		rule, err := agents.ParseRule(r)
		require.NoError(t, err)
		p.Deny = append(p.Deny, rule)
	}
	return p
}

// waitFor reads the subscription until an event of type typ arrives.
func waitFor(t *testing.T, sub *runtime.Subscription, typ runtime.EventType) runtime.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-sub.C():
			require.True(t, ok)
			if e.Type == typ {
				return e
			}
		case <-timeout:
			t.Fatalf("no %s event", typ)
		}
	}
}

func startAsking(t *testing.T, h *harness, text string) (string, *runtime.Subscription, runtime.Event) {
	t.Helper()
	sid := h.session()
	sub, err := h.loop.Subscribe(context.Background(), sid)
	require.NoError(t, err)
	_, err = h.loop.Send(context.Background(), sid, runtime.Input{Content: text})
	require.NoError(t, err)
	return sid, sub, waitFor(t, sub, runtime.EvApprovalRequired)
}

func TestApproval_AllowOnce(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.agent.Policy = askPolicy(t)
	sid, sub, ask := startAsking(t, h, `use read_file {"path":"notes.txt"}`)
	assert.Equal(t, "read_file", ask.ToolName)
	assert.Equal(t, "notes.txt", ask.Content, "the subject the user decides on")

	require.NoError(t, h.loop.Approve(context.Background(), sid, ask.CallID, runtime.AllowOnce))
	evs := collect(context.Background(), t, sub)
	res := find(evs, runtime.EvToolResult)
	require.Len(t, res, 1)
	assert.Equal(t, "buy milk", res[0].Content)
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	assert.ErrorIs(t, h.loop.Approve(context.Background(), sid, ask.CallID, runtime.AllowOnce), runtime.ErrNoApproval)
}

func TestApproval_Deny(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.agent.Policy = askPolicy(t)
	sid, sub, ask := startAsking(t, h, `use read_file {"path":"notes.txt"}`)
	require.NoError(t, h.loop.Approve(context.Background(), sid, ask.CallID, runtime.DenyCall))
	evs := collect(context.Background(), t, sub)
	res := find(evs, runtime.EvToolResult)
	require.Len(t, res, 1)
	assert.False(t, res[0].Success)
	assert.Equal(t, runtime.DeniedResult("notes.txt"), res[0].Content)
	assert.Equal(t, "read_file said: "+runtime.DeniedResult("notes.txt"), find(evs, runtime.EvAssistant)[0].Content,
		"the model hears of it and the turn goes on")
}

func TestApproval_Timeout(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.opts.ApprovalTimeout = 30 * time.Millisecond
	h.restart()
	h.agent.Policy = askPolicy(t)
	_, sub, _ := startAsking(t, h, `use list_dir {}`)
	dec := waitFor(t, sub, runtime.EvApprovalDecision)
	assert.Equal(t, runtime.DenyCall, dec.Decision)
	assert.Equal(t, "timeout", dec.Reason)
	evs := collect(context.Background(), t, sub)
	assert.Contains(t, find(evs, runtime.EvToolResult)[0].Content, "nobody answered")
}

func TestApproval_AllowAlwaysHoldsForTheSession(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.agent.Policy = askPolicy(t)
	sid, sub, ask := startAsking(t, h, `use read_file {"path":"notes.txt"}`)
	require.NoError(t, h.loop.Approve(context.Background(), sid, ask.CallID, runtime.AllowAlways))
	collect(context.Background(), t, sub)
	sub.Close()

	evs := h.turn(sid, `use read_file {"path":"notes.txt"}`)
	assert.Empty(t, find(evs, runtime.EvApprovalRequired), "the same call is not asked about again")
	assert.Equal(t, "buy milk", find(evs, runtime.EvToolResult)[0].Content)

	h.restart() // the permission is part of the session's durable state
	evs = h.turn(sid, `use read_file {"path":"notes.txt"}`)
	assert.Empty(t, find(evs, runtime.EvApprovalRequired))
}

func TestApproval_PolicyDeny(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.agent.Policy = askPolicy(t, "read_file:*.txt")
	sid := h.session()
	evs := h.turn(sid, `use read_file {"path":"notes.txt"}`)
	assert.Empty(t, find(evs, runtime.EvApprovalRequired))
	res := find(evs, runtime.EvToolResult)[0]
	assert.False(t, res.Success)
	assert.Contains(t, res.Content, "rule read_file:*.txt")
}

func TestApproval_PendingAcrossRestart(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.agent.Policy = askPolicy(t)
	sid, sub, ask := startAsking(t, h, `use read_file {"path":"notes.txt"}`)
	sub.Close()
	h.restart()

	sub, err := h.loop.Subscribe(context.Background(), sid)
	require.NoError(t, err)
	require.NoError(t, h.loop.Approve(context.Background(), sid, ask.CallID, runtime.AllowOnce),
		"a pending approval can be answered after a restart")
	evs := collect(context.Background(), t, sub)
	assert.Equal(t, "buy milk", find(evs, runtime.EvToolResult)[0].Content)
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
}

// Agnx's CLI drops its stream on approval_required and answers with POST
// .../approve: a disconnect while the turn waits for a decision does not
// pause it, even for an agent whose on_disconnect is pause; the waiting
// call is listed by Pending and never expires by default.
func TestApproval_DisconnectLeavesItWaiting(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.opts.DisconnectGrace = -1 // pause at once
	h.restart()
	h.agent.Policy = askPolicy(t)
	sid, sub, ask := startAsking(t, h, `use read_file {"path":"notes.txt"}`)
	watcher, err := h.loop.Subscribe(context.Background(), sid)
	require.NoError(t, err)
	sub.Close()
	watcher.Close() // nobody watches now
	paused, err := h.loop.Disconnect(context.Background(), sid)
	require.NoError(t, err)
	assert.False(t, paused, "a turn waiting for a decision is left waiting")

	p, err := h.loop.Pending(context.Background(), sid)
	require.NoError(t, err)
	require.Len(t, p, 1)
	assert.Equal(t, runtime.PendingApproval{CallID: ask.CallID, Tool: "read_file", Command: "notes.txt", At: p[0].At}, p[0])
	assert.True(t, p[0].ExpiresAt.IsZero(), "it never expires")
	assert.ErrorIs(t, h.loop.Approve(context.Background(), sid, "other", runtime.AllowOnce), runtime.ErrOtherApproval)

	sub, err = h.loop.Subscribe(context.Background(), sid)
	require.NoError(t, err)
	require.NoError(t, h.loop.Approve(context.Background(), sid, ask.CallID, runtime.AllowOnce))
	evs := collect(context.Background(), t, sub)
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	p, err = h.loop.Pending(context.Background(), sid)
	require.NoError(t, err)
	assert.Empty(t, p)
}
