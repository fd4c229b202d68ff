package runtime

import (
	"github.com/agnx-lite/agnx-lite/agents"

	"encoding/json"
	"fmt"
	"strings"

	"github.com/valyala/fastjson"
)

// hooks are the agent's hooks with the defaults of its builtins.
func (a *LoadedAgent) hooks() Hooks {
	var names []string
	for _, t := range a.Tools {
		if n := t.Spec().Name; n == "memory" || n == "background_process" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return a.Hooks
	}
	return DefaultHooks(a.Hooks, names)
}

// hookInvocation is a call as hooks name it: tool, or tool:action when
// its arguments have a string action.
func hookInvocation(name, args string) string {
	if action := fastjson.GetString([]byte(args), "action"); action != "" {
		return name + ":" + action
	}
	return name
}

// beforeTool runs the before_tool hooks that match the call, against the
// session's context (which holds the call's own round); the first that
// refuses gives the call's failed result.
func (l *Loop) beforeTool(s *session, a *LoadedAgent, c ToolCall) (string, bool) {
	hooks := a.hooks().BeforeTool
	if len(hooks) == 0 {
		return "", false
	}
	inv := hookInvocation(c.Name, c.Arguments)
	for _, h := range hooks {
		if !hookMatch(h.Match, inv) {
			continue
		}
		switch h.Type {
		case agents.HookDependsOn:
			if h.Prior != "" && !hasPrior(s.st.History, h, c) {
				msg := fmt.Sprintf("Hook guard: this tool requires a prior '%s' call first.", h.Prior)
				if h.MatchArg != "" {
					msg += fmt.Sprintf(" The '%s' argument must match.", h.MatchArg)
				}
				return msg, true
			}
		case agents.HookSkipDuplicate:
			if len(h.MatchArgs) > 0 && hasDuplicate(s.st.History, inv, h.MatchArgs, c) {
				return fmt.Sprintf("Hook guard: duplicate call skipped. An identical '%s' call with the same arguments "+
					"already has a result in this conversation.", inv), true
			}
		default: // validated by the agent's loader; an unknown type guards nothing
		}
	}
	return "", false
}

// hasPrior reports whether the context holds a call matching h.Prior with
// the same h.MatchArg value as c.
func hasPrior(history []Message, h agents.BeforeToolHook, c ToolCall) bool {
	want := argValue(c.Arguments, h.MatchArg)
	for i := len(history) - 1; i >= 0; i-- {
		m := history[i]
		if m.Role != RoleAssistant {
			continue
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == c.ID || !hookMatch(h.Prior, hookInvocation(tc.Name, tc.Arguments)) {
				continue
			}
			if h.MatchArg == "" || argValue(tc.Arguments, h.MatchArg) == want {
				return true
			}
		}
	}
	return false
}

// hasDuplicate reports whether the context holds another call with the
// invocation inv and c's values of keys, answered by a result.
func hasDuplicate(history []Message, inv string, keys []string, c ToolCall) bool {
	for i, m := range history {
		if m.Role != RoleAssistant {
			continue
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == c.ID || hookInvocation(tc.Name, tc.Arguments) != inv || !sameArgs(tc.Arguments, c.Arguments, keys) {
				continue
			}
			for _, r := range history[i+1:] {
				if r.Role == RoleTool && r.ToolCallID == tc.ID && !strings.HasPrefix(r.Content, "[result masked") {
					return true
				}
			}
		}
	}
	return false
}

func sameArgs(a, b string, keys []string) bool {
	for _, k := range keys {
		if argValue(a, k) != argValue(b, k) {
			return false
		}
	}
	return true
}

// argValue is the JSON of the argument key of a call, normalised ("" when
// it has none).
func argValue(args, key string) string {
	if key == "" {
		return ""
	}
	p, err := fastjson.Parse(args)
	if err != nil {
		return ""
	}
	v := p.Get(key)
	if v == nil {
		return ""
	}
	return normJSON(v.MarshalTo(nil))
}

// normJSON re-encodes a JSON value so that equal values compare equal
// (1 and 1.0, key order).
func normJSON(data []byte) string {
	var x any
	if json.Unmarshal(data, &x) != nil {
		return string(data)
	}
	out, _ := json.Marshal(x)
	return string(out)
}

// afterTool returns the steering text of the after_tool hooks that match
// a successful call: their messages, one a line.
func afterTool(a *LoadedAgent, c ToolCall) string {
	var msgs []string
	for _, h := range a.hooks().AfterTool {
		if !hookMatch(h.Match, hookInvocation(c.Name, c.Arguments)) || unlessHolds(h.Unless, c.Arguments) {
			continue
		}
		msgs = append(msgs, h.Message)
	}
	return strings.Join(msgs, "\n")
}

// unlessHolds reports whether an argument of the call equals the value
// an unless pair gives it.
func unlessHolds(unless map[string]any, args string) bool {
	for k, want := range unless {
		got := argValue(args, k)
		if got == "" {
			continue
		}
		w, err := json.Marshal(want)
		if err == nil && normJSON(w) == got {
			return true
		}
	}
	return false
}

// steer keeps the steering of one successful call for the end of its
// round.
func (l *Loop) steer(j toolJob, res Result) {
	if res.IsError || j.t.agent == nil {
		return
	}
	if msg := afterTool(j.t.agent, j.call); msg != "" {
		j.t.steering = append(j.t.steering, msg)
	}
}

// flushSteering records the round's steering as one user message, once
// its last result is in, so that the model reads it with the results.
func (l *Loop) flushSteering(s *session, t *turn) {
	if len(t.steering) == 0 {
		return
	}
	msg := "[steering] " + strings.Join(t.steering, "\n[steering] ")
	t.steering = nil
	l.record(s, Event{Type: EvUserMessage, Content: msg, Steering: true})
}
