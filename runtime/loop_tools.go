package runtime

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
)

// toolPool is the loop's tool limit: a counter and a queue it owns.
type toolPool struct {
	max     int
	running int
	queue   []toolJob
}

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

func (a *LoadedAgent) tool(name string) Tool {
	for _, t := range a.Tools {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

func (a *LoadedAgent) hasTool(name string) bool { return a.tool(name) != nil }

// startTools puts the calls of one model answer through the agent's
// policy: allowed calls are queued, denied ones get an error result at
// once, and those the policy asks about wait for a user's decision. The
// turn goes on when every call has a result.
func (l *Loop) startTools(s *session, calls []ToolCall) {
	t := s.turn
	t.calls = len(calls)
	for _, c := range calls {
		if a, ok := s.st.approval(c.ID); ok {
			l.armApproval(s, t, a) // still waiting, from before a restart
			continue
		}
		subject := t.agent.subject(c)
		decision, rule := t.agent.decide(c.Name, subject)
		if decision == agents.Ask && s.st.alwaysAllowed(c.Name, subject) {
			decision = agents.Allow
		}
		if l.opts.Notify != nil && t.agent.Policy != nil && t.agent.Policy.Notifies(c.Name, subject) {
			l.opts.Notify(Notification{Session: s.st.ID, Agent: s.st.Agent, Tool: c.Name, Subject: subject,
				Decision: decision.String(), Deliveries: t.agent.Policy.Notify.Deliveries})
		}
		switch decision {
		case agents.Deny:
			msg := "error: the agent's policy does not allow this call"
			if rule != "" {
				msg += " (rule " + rule + ")"
			}
			l.toolResult(toolJob{s: s, t: t, call: c}, ErrorResult(msg))
		case agents.Ask:
			l.record(s, Event{Type: EvApprovalRequired, CallID: c.ID, ToolName: c.Name, Content: subject})
			a, _ := s.st.approval(c.ID)
			l.armApproval(s, t, a)
		default:
			l.tools.queue = append(l.tools.queue, toolJob{s: s, t: t, call: c})
		}
	}
	l.runTools()
}

// subject is what a call acts on, for policies: the command, the path.
func (a *LoadedAgent) subject(c ToolCall) string {
	if sj, ok := a.tool(c.Name).(Subjecter); ok {
		return sj.Subject([]byte(c.Arguments))
	}
	return ""
}

func (a *LoadedAgent) decide(tool, subject string) (agents.Decision, string) {
	if a.Policy == nil || a.tool(tool) == nil {
		return agents.Allow, ""
	}
	return a.Policy.Decide(tool, subject)
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
		l.tools.running++
		l.wg.Add(1)
		st := j.s.st
		ctx := WithCall(j.t.ctx, CallInfo{SessionID: st.ID, Agent: st.Agent, CallID: j.call.ID,
			Turns: st.Turns, Usage: st.Usage, Created: st.Created, Events: st.LastSeq})
		go l.runTool(ctx, j, tool, j.t.agent.Spec.Session.Context)
	}
}

func unknownTool(name string, a *LoadedAgent) string {
	names := make([]string, len(a.Tools))
	for i, t := range a.Tools {
		names[i] = t.Spec().Name
	}
	return fmt.Sprintf("error: there is no tool named %q; the tools are: %s", name, strings.Join(names, ", "))
}

// runTool is a worker: it runs one call and posts the result back. A Go
// error or a panic from the tool becomes an error result: a broken tool
// never takes the turn, or the daemon, down.
func (l *Loop) runTool(ctx context.Context, j toolJob, tool Tool, limits agents.Context) {
	defer l.wg.Done()
	start := time.Now()
	res := func() (res Result) {
		defer func() {
			if p := recover(); p != nil {
				l.log.Error("tool panicked", "tool", j.call.Name, "panic", fmt.Sprint(p))
				res = ErrorResult(fmt.Sprintf("error: tool %s crashed", j.call.Name))
			}
		}()
		r, err := tool.Run(ctx, []byte(j.call.Arguments))
		if err != nil {
			return ErrorResult("error: " + err.Error())
		}
		return r
	}()
	if o := l.opts.Observer; o != nil {
		o.ToolCalled(j.t.agent.Spec.Name, j.call.Name, toolKind(tool), !res.IsError, time.Since(start))
	}
	res.Content = truncate(res.Content, limits)
	_ = l.post(context.Background(), &toolDone{job: j, res: res})
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
	l.toolResult(r.job, r.res)
}

// toolResult records one result; the last result of a round sends the
// turn back to the model once it is committed.
func (l *Loop) toolResult(j toolJob, res Result) {
	s, t := j.s, j.t
	l.record(s, Event{Type: EvToolResult, CallID: j.call.ID, ToolName: j.call.Name,
		Success: !res.IsError, Content: res.Content, Details: res.Details})
	t.calls--
	if t.calls > 0 {
		return
	}
	if t.pause {
		l.endTurn(s, TurnPaused)
		return
	}
	l.afterCommit(func(err error) {
		if err == nil && s.turn == t {
			l.callModel(s)
		}
	})
}

// truncate cuts a tool result to the agent's max_tool_result_tokens,
// keeping the head, the tail or both, with a marker saying how much went.
func truncate(s string, c agents.Context) string {
	tokens := c.MaxToolResultTokens
	if tokens <= 0 {
		tokens = 8000
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
