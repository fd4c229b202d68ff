package runtime

import (
	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Bounds of the allow_always bookkeeping: rules kept in memory per agent,
// and saves waiting for the writer.
const (
	maxAlwaysPerAgent = 1024
	policySaveQueue   = 64
	// maxDeniedEcho is how much of a denied command its result repeats.
	maxDeniedEcho = 1000
)

// Notification tells of an executed tool call an agent's policy wants
// reported (notify.enabled, and no notify.patterns or one matches).
type Notification struct {
	Session, Agent string
	Tool           string // the tool's name
	Type           string // bash, builtin, cli, mcp or wasm
	// Command is the call's invocation: the bash command line, the
	// builtin's name[:action], the tool's name.
	Command    string
	Subject    string // what the call acted on (the path, the URL), if the tool says
	Success    bool
	Deliveries []agents.Delivery
}

// policyState is what the loop keeps of allow_always answers: the rules,
// per agent, so that they hold at once for every session of the agent
// (the agent's policy.local.yaml has them too once saved, for the next
// build and restart), and the queue of saves for the writer goroutine.
type policyState struct {
	always  map[string]map[string]struct{} // agent -> AllowRule
	saves   chan policySave
	started bool
}

type policySave struct {
	agent, dir, rule string
}

// policyCall is the call as the agent's policy sees it: its tool type,
// its subject (the command, the path) and its invocation, the parent's
// bash command line, builtin name[:action], cli, wasm or mcp tool name.
func (a *LoadedAgent) policyCall(c ToolCall) agents.Call {
	pc := agents.Call{Tool: c.Name}
	tool := a.tool(c.Name)
	if tool == nil {
		return pc
	}
	if sj, ok := tool.(Subjecter); ok {
		pc.Subject = sj.Subject([]byte(c.Arguments))
	}
	if ci, ok := tool.(CallInvoked); ok {
		if kind, inv, ok := ci.CallInvocation([]byte(c.Arguments)); ok {
			pc.Type, pc.Invocation = kind, inv
			return pc
		}
	}
	switch kind := toolKind(tool); {
	case kind == "builtin" && c.Name == "bash":
		pc.Type, pc.Invocation = "bash", pc.Subject
	case kind == "builtin":
		pc.Type, pc.Invocation = kind, c.Name
		if action := fastjson.GetString([]byte(c.Arguments), "action"); action != "" {
			pc.Invocation = c.Name + ":" + action
		}
	default:
		pc.Type, pc.Invocation = kind, c.Name
		if iv, ok := tool.(Invoked); ok {
			pc.Invocation = iv.Invocation()
		}
	}
	return pc
}

// approvalSubject is what a user is asked about: what the call acts on
// (the command, the path), or its invocation (memory:recall) when the
// tool does not say.
func approvalSubject(pc agents.Call) string {
	if pc.Subject != "" {
		return pc.Subject
	}
	return pc.Invocation
}

// deniedResult is the result of a call the policy denies, in the parent's
// words, with the rule that denied it when one did.
func deniedResult(pc agents.Call, rule string) Result {
	inv := pc.Invocation
	if inv == "" {
		inv = pc.Tool
	}
	if len(inv) > maxDeniedEcho {
		inv = inv[:maxDeniedEcho] + "…"
	}
	msg := "Command '" + inv + "' was denied by policy. This command is not allowed."
	if rule != "" {
		msg += " (rule " + rule + ")"
	}
	return ErrorResult(msg)
}

// alwaysAllowed reports whether a user answered allow_always for this
// call of the agent, in any session since the loop started.
func (l *Loop) alwaysAllowed(agent string, pc agents.Call) bool {
	_, ok := l.policy.always[agent][pc.AllowRule()]
	return ok
}

// allowAlways applies an allow_always answer beyond the session: a rule
// for the pending call (agents.Call.AllowRule, never a text the client
// sent) holds at once for every session of the agent, and is appended,
// off the loop, to the agent's policy.local.yaml, so that it outlives a
// restart.
func (l *Loop) allowAlways(s *session, c ToolCall) {
	t := s.turn
	if t == nil || t.agent == nil || t.agent.tool(c.Name) == nil {
		return
	}
	rule := t.agent.policyCall(c).AllowRule()
	if l.policy.always == nil {
		l.policy.always = make(map[string]map[string]struct{})
	}
	set := l.policy.always[s.st.Agent]
	if set == nil {
		set = make(map[string]struct{})
		l.policy.always[s.st.Agent] = set
	}
	if len(set) < maxAlwaysPerAgent {
		set[rule] = struct{}{}
	}
	dir := ""
	if t.agent.Spec != nil {
		dir = t.agent.Spec.Dir
	}
	if dir == "" {
		l.log.Warn("allow_always holds until the daemon stops: the agent has no folder to save it in",
			"agent", s.st.Agent, "rule", rule)
		return
	}
	if !l.policy.started {
		l.policy.started = true
		l.policy.saves = make(chan policySave, policySaveQueue)
		l.wg.Add(1)
		go l.savePolicies()
	}
	select {
	case l.policy.saves <- policySave{agent: s.st.Agent, dir: dir, rule: rule}:
	default:
		l.log.Error("allow_always not saved to policy.local.yaml: too many saves are waiting; it holds until the daemon stops",
			"agent", s.st.Agent, "rule", rule)
	}
}

// savePolicies is the writer goroutine: it appends the allow_always
// rules, one at a time, to the agents' policy.local.yaml; at shutdown it
// writes those still queued, then returns.
func (l *Loop) savePolicies() {
	defer l.wg.Done()
	save := func(sv policySave) {
		if _, err := l.opts.Policies.AddAllow(sv.dir, sv.rule); err != nil {
			l.log.Error("allow_always not saved; it holds until the daemon stops", "agent", sv.agent, "rule", sv.rule, "err", err)
		}
	}
	for {
		select {
		case sv := <-l.policy.saves:
			save(sv)
		case <-l.done:
			for {
				select {
				case sv := <-l.policy.saves:
					save(sv)
				default:
					return
				}
			}
		}
	}
}

// notifyDone tells Options.Notify of an executed call the agent's
// policy wants reported.
func (l *Loop) notifyDone(j toolJob, res Result) {
	a := j.t.agent
	if l.opts.Notify == nil || a.Policy == nil || !a.Policy.Notify.Enabled {
		return
	}
	pc := a.policyCall(j.call)
	if _, _, notify := a.Policy.CheckCall(pc); !notify {
		return
	}
	l.opts.Notify(Notification{Session: j.s.st.ID, Agent: j.s.st.Agent, Tool: j.call.Name, Type: pc.Type,
		Command: pc.Invocation, Subject: pc.Subject, Success: !res.IsError, Deliveries: a.Policy.Notify.Deliveries})
}
