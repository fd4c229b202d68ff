package runtime

import (
	"fmt"

	"github.com/agnx-lite/agnx-lite/agents"
)

// A child's calls are bounded by its ceiling: the policies of the agents
// above it (see Spawn.Ceiling). Its turn loads them before it starts; a
// call runs only if its own agent's policy and every ceiling policy let
// it: the strictest decision wins (deny over ask over allow), so a child
// never gains a tool or a permission its parent's policy forbids, and
// what any of them would ask about is asked.

// withCeiling loads the ceiling agents of a child's turn, in order, then
// runs fn; a ceiling agent that cannot be built fails the turn, since the
// limits it sets could not be checked.
func (l *Loop) withCeiling(s *session, t *turn, fn func()) {
	sp := s.st.Spawn
	if sp == nil || len(t.ceiling) >= len(sp.Ceiling) {
		fn()
		return
	}
	name := sp.Ceiling[len(t.ceiling)]
	l.withAgent(name, func(a *LoadedAgent, err error) {
		if l.sessions[s.st.ID] != s || s.turn != t {
			return
		}
		if err != nil {
			l.record(s, Event{Type: EvError, Code: "agent_unavailable", Content: fmt.Sprintf(
				"this subagent's parent agent %s cannot be loaded, so the limits its policy sets cannot be checked: "+
					"fix or restore agent %s (%v)", name, name, err)})
			l.endTurn(s, TurnFailed)
			return
		}
		t.ceiling = append(t.ceiling, a)
		l.withCeiling(s, t, fn)
	})
}

// decideFor is the decision on a call in the turn: the agent's own (see
// LoadedAgent.decide), then each ceiling policy's. Asked from inside a
// running call (Ask), the agent's policy is applied even to a tool it
// does not have.
func (l *Loop) decideFor(s *session, t *turn, pc agents.Call, inCall bool) (agents.Decision, string) {
	var (
		d    agents.Decision
		rule string
	)
	if inCall {
		if p := t.agent.Policy; p != nil {
			d, rule, _ = p.CheckCall(pc)
		}
	} else {
		d, rule = t.agent.decide(pc)
	}
	for _, c := range t.ceiling {
		if c.Policy == nil {
			continue
		}
		if cd, crule, _ := c.Policy.CheckCall(pc); cd > d {
			d, rule = cd, crule+" (the policy of parent agent "+c.Spec.Name+")"
		}
	}
	return d, rule
}

// callWorkspace is the workspace override of a child that works in its
// parent's workspace, read-only; "" for the others.
func (t *turn) callWorkspace(s *session) string {
	if sp := s.st.Spawn; sp != nil && sp.Workspace == WorkspaceParent && len(t.ceiling) > 0 {
		return t.ceiling[0].Spec.Workspace
	}
	return ""
}
