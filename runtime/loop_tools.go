package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
)

// toolPool is the loop's tool limit: a counter and a queue it owns.
type toolPool struct {
	max     int
	running int
	queue   []toolJob
	// stuck counts tool goroutines that outlived their call: the call was
	// failed and its slot freed, but the tool ignored its context. Workers
	// touch it, hence atomic.
	stuck atomic.Int64
}

// Deadliner is a Tool that says how long one call may take at most (its
// own timeout, from the call's arguments). Other tools get
// defaultToolDeadline, or builtinToolDeadline when they are built-ins.
type Deadliner interface {
	Deadline(args []byte) time.Duration
}

const (
	// defaultToolDeadline covers the longest timeout a WASM manifest may
	// ask for (wasmtools.MaxTimeout).
	defaultToolDeadline = 10 * time.Minute
	builtinToolDeadline = 2 * time.Minute
	// maxToolGrace is the most a tool gets, once its context has ended,
	// to wind down (kill its process tree, close its files) and return.
	maxToolGrace = 10 * time.Second
)

// StuckTools is how many tool calls were given up on while their tool
// went on running (it ignored its context): each holds a goroutine, and
// maybe a file or a process, until it returns.
func (l *Loop) StuckTools() int64 { return l.tools.stuck.Load() }

type toolJob struct {
	s    *session
	t    *turn
	call ToolCall
}

func (a *LoadedAgent) toolSpecs() []ToolSpec {
	specs := make([]ToolSpec, len(a.Tools))
	for i, t := range a.Tools {
		specs[i] = t.Spec()
	}
	return specs
}

// tool is the agent's tool of that name; as in Agnx, case does not
// matter (an exact match wins).
func (a *LoadedAgent) tool(name string) Tool {
	var folded Tool
	for _, t := range a.Tools {
		n := t.Spec().Name
		if n == name {
			return t
		}
		if folded == nil && strings.EqualFold(n, name) {
			folded = t
		}
	}
	return folded
}

func (a *LoadedAgent) hasTool(name string) bool { return a.tool(name) != nil }

// startTools puts the calls of one model answer through the agent's
// before_tool hooks (a refused call gets its failed result at once) and
// policy: allowed calls are queued, denied ones get an error result at
// once, and those the policy asks about wait for a user's decision (the
// turn gives its slot back while that is all it waits on: see
// loop_park.go). The turn goes on when every call has a result.
func (l *Loop) startTools(s *session, calls []ToolCall) {
	t := s.turn
	t.calls = len(calls)
	for _, c := range calls {
		if a, ok := s.st.approval(c.ID); ok {
			l.armApproval(s, t, a) // still waiting, from before a restart
			continue
		}
		if msg, rejected := l.beforeTool(s, t.agent, c); rejected {
			l.toolResult(toolJob{s: s, t: t, call: c}, ErrorResult(msg))
			continue
		}
		pc := t.agent.policyCall(c)
		decision, rule := l.decideFor(s, t, pc, false)
		shown := approvalSubject(pc)
		if decision == agents.Ask && (s.st.alwaysAllowed(c.Name, shown) || l.alwaysAllowed(s.st.Agent, pc)) {
			decision = agents.Allow
		}
		switch decision {
		case agents.Deny:
			l.toolResult(toolJob{s: s, t: t, call: c}, deniedResult(pc, rule))
		case agents.Ask:
			l.record(s, Event{Type: EvApprovalRequired, CallID: c.ID, ToolName: c.Name, Content: shown})
			a, _ := s.st.approval(c.ID)
			l.armApproval(s, t, a)
			l.subagentBlocked(s)
		default:
			l.tools.queue = append(l.tools.queue, toolJob{s: s, t: t, call: c})
		}
	}
	l.parkIfWaiting(s)
	l.runTools()
}

// decide returns the policy's decision on a call; a call of a tool the
// agent lacks is let through, to fail as unknown with a result that
// names the tools it has.
func (a *LoadedAgent) decide(pc agents.Call) (d agents.Decision, rule string) {
	if a.Policy == nil || a.tool(pc.Tool) == nil {
		return agents.Allow, ""
	}
	d, rule, _ = a.Policy.CheckCall(pc)
	return d, rule
}

func (l *Loop) runTools() {
	for l.tools.running < l.tools.max && len(l.tools.queue) > 0 {
		j := l.tools.queue[0]
		l.tools.queue[0] = toolJob{}
		l.tools.queue = l.tools.queue[1:]
		if j.s.turn != j.t {
			continue // cancelled while it waited
		}
		tool := j.t.agent.tool(j.call.Name)
		if tool == nil {
			l.toolResult(j, ErrorResult(unknownTool(j.call.Name, j.t.agent)))
			continue
		}
		if _, ok := tool.(AgentTool); ok {
			l.agentCall(j) // on the loop: it only records and reads
			continue
		}
		l.tools.running++
		l.wg.Add(1)
		st := j.s.st
		ws := j.t.callWorkspace(j.s)
		ctx := WithCall(j.t.ctx, CallInfo{SessionID: st.ID, Agent: st.Agent, Gateway: st.Gateway, ChatID: st.ChatID, CallID: j.call.ID,
			Turns: st.Turns, Usage: st.Usage, Created: st.Created, Events: st.LastSeq,
			Parent: st.parent(), Workspace: ws, ReadOnly: ws != "", Viewer: viewer(st, j.t.agent),
			loop: l, turn: j.t.id, tool: j.call.Name})
		go l.runTool(ctx, j, tool, j.t.agent.Spec.Session.Context)
	}
}

func unknownTool(name string, a *LoadedAgent) string {
	names := make([]string, len(a.Tools))
	for i, t := range a.Tools {
		names[i] = t.Spec().Name
	}
	return fmt.Sprintf("Tool execution failed: tool not found: %s (there is no tool named %q; the tools are: %s)",
		name, name, strings.Join(names, ", "))
}

// runTool is a worker: it runs one call (see callTool) and posts the
// result back.
func (l *Loop) runTool(ctx context.Context, j toolJob, tool Tool, limits agents.Context) {
	defer l.wg.Done()
	start := time.Now()
	res := l.callTool(ctx, j.call, tool)
	if o := l.opts.Observer; o != nil {
		o.ToolCalled(j.t.agent.Spec.Name, j.call.Name, toolKind(tool), !res.IsError, time.Since(start))
	}
	res.Content = truncate(res.Content, limits)
	_ = l.post(context.Background(), &toolDone{job: j, res: res})
}

// callTool runs one call in a goroutine of its own and waits for it
// until the call's deadline, or the turn's end, plus a grace period. A
// tool that has not returned by then (it ignored its context: blocked
// opening a FIFO, in a system call) has its call failed, so the turn goes
// on and the tool slot is freed; its goroutine is left behind, counted in
// StuckTools until it returns.
func (l *Loop) callTool(ctx context.Context, call ToolCall, tool Tool) Result {
	deadline := toolDeadline(tool, []byte(call.Arguments))
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	done := make(chan Result, 1) // the tool's goroutine never blocks on it
	go func() { done <- runSafely(ctx, call, tool, l.log) }()
	select {
	case res := <-done:
		return res
	case <-ctx.Done():
	}
	grace := time.NewTimer(min(maxToolGrace, max(100*time.Millisecond, deadline/4)))
	defer grace.Stop()
	select {
	case res := <-done:
		return res
	case <-grace.C:
	}
	n := l.tools.stuck.Add(1)
	go func() { <-done; l.tools.stuck.Add(-1) }()
	l.log.Error("a tool call did not stop in time; it was failed and its goroutine left behind",
		"tool", call.Name, "deadline", deadline, "stuck_tools", n)
	return ErrorResult(fmt.Sprintf("error: the tool did not stop in time (its limit is %s) and was abandoned; "+
		"what it did is unknown", deadline))
}

// runSafely runs the tool; a Go error or a panic becomes an error
// result: a broken tool never takes the turn, or the daemon, down.
func runSafely(ctx context.Context, call ToolCall, tool Tool, log *slog.Logger) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("tool panicked", "tool", call.Name, "panic", fmt.Sprint(p))
			res = ErrorResult(fmt.Sprintf("error: tool %s crashed", call.Name))
		}
	}()
	r, err := tool.Run(ctx, []byte(call.Arguments))
	if err != nil {
		return ErrorResult("error: " + err.Error())
	}
	return r
}

// toolDeadline is how long one call of tool may take.
func toolDeadline(tool Tool, args []byte) time.Duration {
	if d, ok := tool.(Deadliner); ok {
		if dl := d.Deadline(args); dl > 0 {
			return dl
		}
	}
	if toolKind(tool) == "builtin" {
		return builtinToolDeadline
	}
	return defaultToolDeadline
}

type toolDone struct {
	job toolJob
	res Result
}

func (r *toolDone) handle(l *Loop) {
	l.tools.running--
	if r.job.s.turn != r.job.t || l.sessions[r.job.s.st.ID] != r.job.s || l.runCtx.Err() != nil {
		return // stale, or shutting down (a cancelled tool's result is not one)
	}
	l.notifyDone(r.job, r.res)
	l.steer(r.job, r.res)
	l.toolResult(r.job, r.res)
}

// toolResult records one result; the last result of a round sends the
// turn back to the model once it is committed.
func (l *Loop) toolResult(j toolJob, res Result) {
	s, t := j.s, j.t
	l.endAsks(s, j.call.ID)
	l.record(s, Event{Type: EvToolResult, CallID: j.call.ID, ToolName: j.call.Name,
		Success: !res.IsError, Content: res.Content, Details: res.Details})
	t.calls--
	if t.calls > 0 {
		l.parkIfWaiting(s)
		return
	}
	l.flushSteering(s, t)
	if t.pause {
		l.endTurn(s, TurnPaused)
		return
	}
	l.afterCommit(func(err error) {
		if err == nil && s.turn == t {
			l.resume(s, func() { l.callModel(s) })
		}
	})
}

// truncate cuts a tool result to the agent's max_tool_result_tokens,
// keeping the head, the tail or both, with a marker saying how much went.
func truncate(s string, c agents.Context) string {
	tokens := c.MaxToolResultTokens
	if tokens <= 0 {
		tokens = agents.DefaultMaxToolResultTokens
	}
	limit := tokens * 4
	if len(s) <= limit {
		return s
	}
	cut := len(s) - limit
	marker := fmt.Sprintf("\n[... %d characters cut: the result was longer than max_tool_result_tokens ...]\n", cut)
	switch c.ToolResultTruncation {
	case "tail":
		return marker + strings.ToValidUTF8(s[cut:], "")
	case "both":
		half := limit / 2
		return strings.ToValidUTF8(s[:half], "") + marker + strings.ToValidUTF8(s[len(s)-(limit-half):], "")
	default:
		return strings.ToValidUTF8(s[:limit], "") + marker
	}
}
