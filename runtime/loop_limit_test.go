package runtime_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// A model that never stops calling tools: after max_tool_iterations
// rounds it gets one call offering no tools, told so; what it answers is
// the answer (tool calls it makes anyway are not run), and a notice says
// the turn stopped using tools and how to allow more.
func TestLoop_MaxToolIterations(t *testing.T) {
	h := newHarness(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		rep := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "list_dir", Arguments: `{}`}}}
		if len(r.Tools) == 0 {
			rep.Text = "here is what I found"
		}
		return rep
	})
	h.agent.Spec.Session.MaxToolIterations = 3
	sid := h.session()
	evs := h.turn(sid, "loop forever")

	reqs := h.fake.Requests()
	require.Len(t, reqs, 4, "three tool rounds, then one call without tools")
	for _, r := range reqs[:3] {
		assert.NotEmpty(t, r.Tools)
	}
	last := reqs[3]
	assert.Empty(t, last.Tools, "the last request offers no tools")
	assert.Equal(t, "user", last.Last().Role)
	assert.Contains(t, last.Last().Content, "The 3 tool rounds this turn allows are used up")
	assert.Len(t, find(evs, runtime.EvToolResult), 3, "the calls of the last answer are not run")

	answers := find(evs, runtime.EvAssistant)
	require.Len(t, answers, 4)
	assert.Equal(t, "here is what I found", answers[3].Content)
	assert.Empty(t, answers[3].ToolCalls)
	n := len(evs)
	assert.Equal(t, runtime.EvError, evs[n-2].Type, "the notice comes after the answer")
	assert.Equal(t, runtime.CodeToolLimit, evs[n-2].Code)
	assert.Equal(t, "this turn stopped using tools after 3 rounds, so its answer may be incomplete: "+
		"raise spec.session.max_tool_iterations in the agent's agent.yaml (up to 100) to allow more", evs[n-2].Content)
	assert.Equal(t, runtime.TurnCompleted, evs[n-1].Reason)
	assert.Equal(t, types(evs), types(h.durable(sid)[1:]), "all of it is in the log")

	// The history the model sees next holds no hint, and the next turn
	// has its rounds again.
	h.turn(sid, "again")
	reqs = h.fake.Requests()
	assert.NotEmpty(t, reqs[4].Tools)
	for _, m := range reqs[4].Messages {
		assert.NotContains(t, m.Content, "tool rounds this turn allows")
	}
}

// gateTool answers "ok", except its call number block, which waits for
// its context to end: a call a restart interrupts.
type gateTool struct {
	calls   atomic.Int32
	block   int32
	blocked chan struct{}
}

func (g *gateTool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "gate", Description: "a gate", Schema: []byte(`{"type":"object"}`)}
}

func (g *gateTool) Run(ctx context.Context, _ []byte) (runtime.Result, error) {
	if g.calls.Add(1) == g.block {
		close(g.blocked)
		<-ctx.Done()
		return runtime.Result{}, ctx.Err()
	}
	return runtime.Result{Content: "ok"}, nil
}

// The rounds of a turn are counted in the session's durable state: a turn
// resumed after a restart goes on counting, it does not start over.
func TestLoop_MaxToolIterationsAcrossRestart(t *testing.T) {
	release, open := latch()
	h := newHarness(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		if len(r.Tools) == 0 {
			<-release
			return llmtest.Reply{Text: "done"}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "gate", Arguments: `{}`}}}
	})
	t.Cleanup(open)
	gt := &gateTool{block: 2, blocked: make(chan struct{})}
	h.agent.Tools = append(h.agent.Tools, gt)
	h.agent.Spec.Session.MaxToolIterations = 3
	h.agent.Spec.Session.OnDisconnect = "continue"
	sid := h.session()
	_, err := h.loop.Send(context.Background(), sid, runtime.Input{Content: "go"})
	require.NoError(t, err)
	select {
	case <-gt.blocked: // the second round's call runs
	case <-time.After(10 * time.Second):
		t.Fatal("the second round never called its tool")
	}
	h.restart()

	sub, err := h.loop.Subscribe(context.Background(), sid)
	require.NoError(t, err)
	open()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evs := collect(ctx, t, sub)
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)

	reqs := h.fake.Requests()
	require.Len(t, reqs, 4, "two rounds, the restart, one more round, then the last call")
	assert.NotEmpty(t, reqs[2].Tools)
	assert.Empty(t, reqs[3].Tools)
	assert.EqualValues(t, 3, gt.calls.Load(), "the interrupted call is not run again")
	var notices []runtime.Event
	for _, e := range h.durable(sid) {
		if e.Type == runtime.EvError && e.Code == runtime.CodeToolLimit {
			notices = append(notices, e)
		}
	}
	require.Len(t, notices, 1)
	assert.Contains(t, notices[0].Content, "after 3 rounds")
}

// A small model that writes a tool call as text in the last, tool-less
// call: the markup is cut from its answer and nothing runs.
func TestLoop_MaxToolIterationsTextCall(t *testing.T) {
	h := newHarness(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		if len(r.Tools) == 0 {
			return llmtest.Reply{Text: "Nothing more to see. " + llmtest.TextToolCall("list_dir", `{}`)}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "list_dir", Arguments: `{}`}}}
	})
	h.agent.Spec.Session.MaxToolIterations = 1
	evs := h.turn(h.session(), "look")
	answers := find(evs, runtime.EvAssistant)
	require.Len(t, answers, 2)
	assert.Equal(t, "Nothing more to see.", answers[1].Content)
	assert.Empty(t, answers[1].ToolCalls)
	assert.NotContains(t, tokens(evs), "<tool_call>", "the markup never reaches the user")
	assert.Len(t, find(evs, runtime.EvToolResult), 1)
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
}

// latch returns a channel a fake's handler waits on and the function
// that opens it, once. A test registers open with t.Cleanup after the
// fake, so that it runs before the fake closes (which waits for its
// handlers) even when the test fails early.
func latch() (<-chan struct{}, func()) {
	c := make(chan struct{})
	var once sync.Once
	return c, func() { once.Do(func() { close(c) }) }
}
