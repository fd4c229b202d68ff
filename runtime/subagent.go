package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/valyala/fastjson"
)

// AgentToolName is the name of the built-in tool that delegates work to
// subagents.
const AgentToolName = "agent"

// OriginParent and OriginSubagent are the origins of the messages a parent
// and its children send each other: a task or a follow-up for the child,
// a finished child's report for the parent.
const (
	OriginParent   = "parent"
	OriginSubagent = "subagent"
)

// SubagentLimits bound what one session may delegate. Zero values mean
// the defaults.
type SubagentLimits struct {
	// MaxDepth is how deep subagents may nest: 1 lets a session spawn
	// children that may not spawn their own. Default 2.
	MaxDepth int
	// MaxChildren is how many children one session may spawn in all.
	// Default 16.
	MaxChildren int
	// MaxTokens is how many tokens the children of one session may use
	// together, checked when a child is spawned, sent a message or starts
	// a turn. Default 1,000,000.
	MaxTokens int
}

// The defaults of SubagentLimits, which agnx.yaml's subagents section
// leaves at zero when it does not set them.
const (
	DefaultSubagentDepth    = 2
	DefaultSubagentChildren = 16
	DefaultSubagentTokens   = 1_000_000
)

func (s SubagentLimits) withDefaults() SubagentLimits {
	if s.MaxDepth <= 0 {
		s.MaxDepth = DefaultSubagentDepth
	}
	if s.MaxChildren <= 0 {
		s.MaxChildren = DefaultSubagentChildren
	}
	if s.MaxTokens <= 0 {
		s.MaxTokens = DefaultSubagentTokens
	}
	return s
}

// Bounds of the agent tool's arguments and results.
const (
	maxTaskBytes       = 32 << 10
	maxWaitIDs         = 32
	maxChildAnswer     = 8 << 10
	defaultWaitTimeout = 30 * time.Minute
	maxWaitTimeout     = 24 * time.Hour
)

// AgentTool is the built-in agent tool. The loop runs its calls itself,
// on its own goroutine (they only record events and read sessions), so
// that a spawn, a message to a child or a close is stored in the same
// commit as the call's result, and a wait holds no turn slot and
// survives a restart.
type AgentTool struct{}

var _ Tool = AgentTool{}

// Spec describes the tool to the model.
func (AgentTool) Spec() ToolSpec {
	return ToolSpec{Name: AgentToolName,
		Description: "Delegate work to subagents: child sessions of another agent (or of this one) that work on their own and report back. " +
			"'spawn' starts one on a task (give it everything it needs to know); 'wait' waits until children finish (all, or the first) " +
			"and returns their answers; 'send' gives a child a follow-up message; 'status' and 'list' tell how they are doing; " +
			"'close' ends one. A child you do not wait for reports back to this conversation when it finishes.",
		Schema: []byte(`{"type":"object","properties":{` +
			`"action":{"type":"string","enum":["spawn","wait","send","status","list","close"]},` +
			`"agent":{"type":"string","description":"spawn: the agent the child runs (default: this one)"},` +
			`"task":{"type":"string","description":"spawn: what the child should do"},` +
			`"workspace":{"type":"string","enum":["own","parent"],"description":"spawn: 'parent' lets the child read this agent's workspace (read-only) instead of working in its own"},` +
			`"ids":{"type":"array","items":{"type":"string"},"description":"wait: the children to wait for (default: every child still working)"},` +
			`"mode":{"type":"string","enum":["all","first"],"description":"wait: return when all have finished (default) or the first has"},` +
			`"timeout_seconds":{"type":"integer","description":"wait: give up after this long (default 1800)"},` +
			`"id":{"type":"string","description":"send, status, close: the child's session id"},` +
			`"message":{"type":"string","description":"send: the follow-up message"}},` +
			`"required":["action"]}`)}
}

// Run answers outside the loop (agnx-lite tool run): subagents need the
// daemon's sessions.
func (AgentTool) Run(context.Context, []byte) (Result, error) {
	return ErrorResult("error: agent: subagents run only inside a session of the daemon or a chat: start one with agnx-lite chat"), nil
}

type agentArgs struct {
	Action, Agent, Task, Workspace, Mode, ID, Message string
	IDs                                               []string
	Timeout                                           time.Duration
}

// parseAgentArgs reads a call's arguments, bounded.
func parseAgentArgs(p *fastjson.Parser, raw string) (agentArgs, error) {
	v, err := p.Parse(raw)
	if err != nil || v.Type() != fastjson.TypeObject {
		return agentArgs{}, fmt.Errorf("the arguments are not a JSON object: call agent with {\"action\": ...}")
	}
	str := func(k string) string { return string(v.GetStringBytes(k)) }
	a := agentArgs{Action: str("action"), Agent: str("agent"), Task: str("task"), Workspace: str("workspace"),
		Mode: str("mode"), ID: str("id"), Message: str("message")}
	for _, x := range v.GetArray("ids") {
		if b, err := x.StringBytes(); err == nil {
			a.IDs = append(a.IDs, string(b))
		}
	}
	if len(a.IDs) > maxWaitIDs {
		return a, fmt.Errorf("wait takes at most %d ids at once", maxWaitIDs)
	}
	if len(a.Task) > maxTaskBytes || len(a.Message) > maxTaskBytes {
		return a, fmt.Errorf("the task or message is longer than %d KiB: say it shorter, or write it to a file the child can read", maxTaskBytes>>10)
	}
	switch n := v.GetInt("timeout_seconds"); {
	case n <= 0:
		a.Timeout = defaultWaitTimeout
	case time.Duration(n)*time.Second > maxWaitTimeout:
		a.Timeout = maxWaitTimeout
	default:
		a.Timeout = time.Duration(n) * time.Second
	}
	return a, nil
}

// agentCall runs one call of the agent tool on the loop goroutine.
func (l *Loop) agentCall(j toolJob) {
	a, err := parseAgentArgs(&l.parser, j.call.Arguments)
	if err != nil {
		l.agentDone(j, ErrorResult("error: agent: "+err.Error()))
		return
	}
	switch a.Action {
	case "spawn":
		l.spawn(j, a)
	case "wait":
		l.wait(j, a)
	case "send":
		l.sendChild(j, a)
	case "status", "list":
		l.agentDone(j, l.childrenStatus(j.s, a.ID))
	case "close":
		l.closeChild(j, a)
	default:
		l.agentDone(j, ErrorResult(fmt.Sprintf("error: agent: unknown action %q: use spawn, wait, send, status, list or close", a.Action)))
	}
}

// agentDone records an agent call's result as a worker's would be.
func (l *Loop) agentDone(j toolJob, res Result) {
	if j.s.turn != j.t || l.sessions[j.s.st.ID] != j.s {
		return // the turn ended meanwhile
	}
	res.Content = truncate(res.Content, j.t.agent.Spec.Session.Context)
	l.notifyDone(j, res)
	l.steer(j, res)
	l.toolResult(j, res)
}

// isAgentWait reports whether an open call is a wait of the agent tool
// on child (any child when child is "").
func isAgentWait(p *fastjson.Parser, c ToolCall, child string) bool {
	if c.Name != AgentToolName {
		return false
	}
	a, err := parseAgentArgs(p, c.Arguments)
	if err != nil || a.Action != "wait" {
		return false
	}
	if len(a.IDs) == 0 || child == "" {
		return true
	}
	for _, id := range a.IDs {
		if id == child {
			return true
		}
	}
	return false
}
