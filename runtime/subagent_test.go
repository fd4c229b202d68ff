package runtime_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// delegator is a fake model for subagent tests. A parent told
// "delegate: a; b" spawns one child per task (tasks "a" and "b"), then
// waits for all of them and answers "final: <the wait's result>". A
// child answers "answer to <task>", after hold(task) returns. Told
// "spawn-only: a", a parent spawns and answers at once. Any other
// message (a child's report) is echoed.
func delegator(hold func(task string)) llmtest.Handler {
	echo := llmtest.Echo()
	return func(r llmtest.RecordedRequest) llmtest.Reply {
		last := r.Last()
		if last.Role == "tool" {
			switch {
			case strings.HasPrefix(last.Content, "Spawned") && strings.Contains(r.LastUser(), "delegate:"):
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "agent", Arguments: `{"action":"wait"}`}}}
			default:
				return llmtest.Reply{Text: "final: " + last.Content}
			}
		}
		user := r.LastUser()
		for _, mode := range []string{"delegate:", "spawn-only:"} {
			if rest, ok := strings.CutPrefix(user, mode); ok {
				var calls []llmtest.ToolCall
				for _, task := range strings.Split(rest, ";") {
					calls = append(calls, llmtest.ToolCall{Name: "agent",
						Arguments: `{"action":"spawn","task":"` + strings.TrimSpace(task) + `"}`})
				}
				return llmtest.Reply{ToolCalls: calls}
			}
		}
		if !strings.HasPrefix(user, "[agnx-lite]") && !strings.HasPrefix(user, "use ") && len(r.Tools) > 0 && !strings.Contains(user, " ") {
			if hold != nil {
				hold(user)
			}
			return llmtest.Reply{Text: "answer to " + user}
		}
		return echo(r)
	}
}

// withAgentTool gives the harness's agent the agent tool.
func withAgentTool(h *harness) {
	h.agent.Tools = append(h.agent.Tools, runtime.AgentTool{})
}

func TestSubagent_SpawnAndWaitAll(t *testing.T) {
	h := newHarness(t, delegator(nil))
	withAgentTool(h)
	sid := h.session()
	evs := h.turn(sid, "delegate: alpha; beta")
	require.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	final := find(evs, runtime.EvAssistant)
	answer := final[len(final)-1].Content
	assert.Contains(t, answer, "answer to alpha")
	assert.Contains(t, answer, "answer to beta", "wait with no ids waits for every child")

	list, err := h.loop.Sessions(context.Background())
	require.NoError(t, err)
	var children []runtime.SessionInfo
	for _, s := range list {
		if s.Parent == sid {
			children = append(children, s)
		}
	}
	require.Len(t, children, 2, "children are ordinary sessions linked to their parent")
	for _, c := range children {
		assert.Equal(t, "assistant", c.Agent)
		evs := h.durable(c.ID)
		require.NotNil(t, evs[0].Spawn)
		assert.Equal(t, sid, evs[0].Spawn.Parent)
		assert.Equal(t, 1, evs[0].Spawn.Depth)
		assert.Equal(t, []string{"assistant"}, evs[0].Spawn.Ceiling)
		assert.Equal(t, runtime.OriginParent, evs[1].Origin, "the task comes from the parent")
	}
}

func TestSubagent_UnwaitedChildReportsBack(t *testing.T) {
	h := newHarness(t, delegator(nil))
	withAgentTool(h)
	sid := h.session()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := h.loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	defer sub.Close()
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "spawn-only: gamma"})
	require.NoError(t, err)
	first := collect(ctx, t, sub)
	assert.Contains(t, find(first, runtime.EvAssistant)[1].Content, "Spawned subagent")
	// The child finishes later and its report starts a turn of the parent.
	report := waitFor(t, sub, runtime.EvUserMessage)
	assert.Equal(t, runtime.OriginSubagent, report.Origin)
	assert.Contains(t, report.Content, "answer to gamma")
	second := collect(ctx, t, sub)
	assert.Equal(t, runtime.TurnCompleted, second[len(second)-1].Reason)
}

func TestSubagent_Limits(t *testing.T) {
	h := newHarness(t, delegator(nil))
	withAgentTool(h)
	h.opts.Subagents = runtime.SubagentLimits{MaxChildren: 1, MaxDepth: 1}
	h.restart()
	sid := h.session()
	evs := h.turn(sid, "spawn-only: one; two")
	res := find(evs, runtime.EvToolResult)
	require.Len(t, res, 2)
	if res[0].Success { // the refusal is recorded at once, the spawn once its agent is built
		res[0], res[1] = res[1], res[0]
	}
	assert.True(t, res[1].Success, res[1].Content)
	assert.False(t, res[0].Success)
	assert.Contains(t, res[0].Content, "already spawned 1 subagents")

	// The child may not spawn: MaxDepth 1.
	kids := childrenOf(t, h, sid)
	require.Len(t, kids, 1)
	idle(t, h, kids[0])
	evs = h.turn(kids[0], "spawn-only: deeper")
	res = find(evs, runtime.EvToolResult)
	require.Len(t, res, 1)
	assert.Contains(t, res[0].Content, "nest 1 deep")
}

// idle follows the session from its start until its first turn has
// ended, and returns its events.
func idle(t *testing.T, h *harness, sid string) []runtime.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := h.loop.Follow(ctx, sid, 0)
	require.NoError(t, err)
	defer sub.Close()
	return collect(ctx, t, sub)
}

func childrenOf(t *testing.T, h *harness, parent string) []string {
	t.Helper()
	list, err := h.loop.Sessions(context.Background())
	require.NoError(t, err)
	var out []string
	for _, s := range list {
		if s.Parent == parent {
			out = append(out, s.ID)
		}
	}
	return out
}

// A child never runs a call its parent's policy denies, whatever its own
// policy says.
func TestSubagent_ParentPolicyBoundsTheChild(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.agent.Tools = append([]runtime.Tool{runtime.AgentTool{}}, h.agent.Tools...) // Echo calls the first tool it is told to use
	deny, err := agents.ParseRule("read_file")
	require.NoError(t, err)
	h.agent.Policy = &agents.Policy{Mode: "dangerous", Deny: []agents.Rule{deny}}
	helper := *h.agent
	helperSpec := *h.agent.Spec
	helperSpec.Name = "helper"
	helper.Spec, helper.Policy = &helperSpec, nil // allows everything itself
	h.opts.Agents.(loader)["helper"] = &helper

	sid := h.session()
	evs := h.turn(sid, `use agent {"action":"spawn","agent":"helper","task":"use read_file {\"path\":\"notes.txt\"}"}`)
	spawned := find(evs, runtime.EvToolResult)[0]
	require.True(t, spawned.Success, spawned.Content)
	res := find(idle(t, h, childrenOf(t, h, sid)[0]), runtime.EvToolResult)
	require.Len(t, res, 1)
	result := res[0]
	assert.False(t, result.Success)
	assert.Contains(t, result.Content, "denied by policy")
	assert.Contains(t, result.Content, "parent agent assistant")
}

// Two parents wait on six children with two turn slots: the waits hold no
// slot, so the children run (two at a time) and both parents finish.
func TestSubagent_WaitsHoldNoTurnSlot(t *testing.T) {
	release := make(chan struct{})
	d := delegator(func(string) { <-release })
	// Both parents' first model calls meet, so both turns hold a slot
	// before any child exists: the children queue behind them.
	var both sync.WaitGroup
	both.Add(2)
	h := newHarness(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.Last().Role == "user" && strings.HasPrefix(r.LastUser(), "delegate:") {
			both.Done()
			both.Wait()
		}
		return d(r)
	})
	withAgentTool(h)
	h.opts.MaxTurns = 2
	h.restart()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var subs []*runtime.Subscription
	for _, tasks := range []string{"delegate: a1; a2; a3", "delegate: b1; b2; b3"} {
		sid := h.session()
		sub, err := h.loop.Subscribe(ctx, sid)
		require.NoError(t, err)
		defer sub.Close()
		subs = append(subs, sub)
		_, err = h.loop.Send(ctx, sid, runtime.Input{Content: tasks})
		require.NoError(t, err)
	}
	// Once a parent's wait call is published, the loop parks its turn in
	// the same step, before it reads the Stats request that follows.
	for _, sub := range subs {
		for {
			e := waitFor(t, sub, runtime.EvToolCall)
			if strings.Contains(e.Arguments, `"wait"`) {
				break
			}
		}
	}
	st, err := h.loop.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Parked, "both parents wait, holding no slot")
	assert.Equal(t, 2, st.Running, "the children hold the slots")
	close(release)
	for i, sub := range subs {
		evs := collect(ctx, t, sub)
		require.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
		final := find(evs, runtime.EvAssistant)
		answer := final[len(final)-1].Content
		for _, n := range []string{"1", "2", "3"} {
			assert.Contains(t, answer, "answer to "+string("ab"[i])+n)
		}
	}
}

// askTool asks about a command from inside its call and returns the
// answer; progress says so first.
type askTool struct{}

func (askTool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "asker", Description: "asks", Schema: []byte(`{"type":"object"}`)}
}

func (askTool) Run(ctx context.Context, _ []byte) (runtime.Result, error) {
	runtime.Progress(ctx, "about to ask")
	d, err := runtime.Ask(ctx, runtime.Question{Tool: "bash", Subject: "rm -rf build"})
	if err != nil {
		return runtime.ErrorResult("ask failed: " + err.Error()), nil
	}
	info, _ := runtime.CallFrom(ctx)
	return runtime.Result{Content: "decision " + d + " ws=" + info.Workspace}, nil
}

func TestAsk_PolicyAsksAPerson(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.agent.Tools = append(h.agent.Tools, askTool{})
	h.agent.Policy = askPolicy(t)
	sid := h.session()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := h.loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	defer sub.Close()
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "use asker"})
	require.NoError(t, err)
	// The call itself is asked about first (mode ask), then from inside.
	first := waitFor(t, sub, runtime.EvApprovalRequired)
	require.NoError(t, h.loop.Approve(ctx, sid, first.CallID, runtime.AllowOnce))
	progress := waitFor(t, sub, runtime.EvToolProgress)
	assert.Equal(t, "about to ask", progress.Content)
	assert.Equal(t, first.CallID, progress.CallID)
	inner := waitFor(t, sub, runtime.EvApprovalRequired)
	assert.Equal(t, first.CallID+".1", inner.CallID)
	assert.Equal(t, "bash", inner.ToolName)
	assert.Equal(t, "rm -rf build", inner.Content)
	st, err := h.loop.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Parked, "a call asking a person holds no turn slot")
	require.NoError(t, h.loop.Approve(ctx, sid, inner.CallID, runtime.DenyCall))
	evs := collect(ctx, t, sub)
	res := find(evs, runtime.EvToolResult)
	require.Len(t, res, 1)
	assert.Equal(t, "decision deny ws=", res[0].Content)
}

func TestAsk_PolicyDecidesWithoutAPerson(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.agent.Tools = append(h.agent.Tools, askTool{})
	deny, err := agents.ParseRule("bash:rm *")
	require.NoError(t, err)
	h.agent.Policy = &agents.Policy{Mode: "dangerous", Deny: []agents.Rule{deny}}
	evs := h.turn(h.session(), "use asker")
	assert.Empty(t, find(evs, runtime.EvApprovalRequired), "the policy denies it: nobody is asked")
	assert.Equal(t, "decision deny ws=", find(evs, runtime.EvToolResult)[0].Content)

	h.agent.Policy = nil
	evs = h.turn(h.session(), "use asker")
	assert.Equal(t, "decision allow_once ws=", find(evs, runtime.EvToolResult)[0].Content)
}

// A question nobody answers ends with its call: a cancelled turn denies
// it, and Ask returns.
func TestAsk_CancelledTurnSettlesTheQuestion(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.agent.Tools = append(h.agent.Tools, askTool{})
	h.agent.Policy = askPolicy(t)
	h.agent.Policy.Allow = []agents.Rule{mustRule(t, "asker")}
	sid := h.session()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := h.loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	defer sub.Close()
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "use asker"})
	require.NoError(t, err)
	waitFor(t, sub, runtime.EvApprovalRequired)
	ok, err := h.loop.Cancel(ctx, sid)
	require.NoError(t, err)
	assert.True(t, ok)
	waitFor(t, sub, runtime.EvTurnEnd)
	pending, err := h.loop.Pending(ctx, sid)
	require.NoError(t, err)
	assert.Empty(t, pending)
}

func mustRule(t *testing.T, s string) agents.Rule {
	r, err := agents.ParseRule(s)
	require.NoError(t, err)
	return r
}

// A child given its parent's workspace gets it, read-only, in its calls.
func TestSubagent_ParentWorkspaceReadOnly(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.agent.Tools = append([]runtime.Tool{runtime.AgentTool{}}, h.agent.Tools...)
	helper := *h.agent
	helperSpec := *h.agent.Spec
	helperSpec.Name, helperSpec.Workspace = "helper", t.TempDir()
	helper.Spec, helper.Tools = &helperSpec, []runtime.Tool{askTool{}}
	h.opts.Agents.(loader)["helper"] = &helper
	sid := h.session()
	h.turn(sid, `use agent {"action":"spawn","agent":"helper","workspace":"parent","task":"use asker"}`)
	res := find(idle(t, h, childrenOf(t, h, sid)[0]), runtime.EvToolResult)
	require.Len(t, res, 1)
	assert.Equal(t, "decision allow_once ws="+h.agent.Spec.Workspace, res[0].Content)
}
