package runtime

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
)

// spawn starts a child session on the task, once its agent is built: its
// session_start, its first message and the spawn call's result are one
// commit, so a crash leaves either all of them or none (and the call,
// still open, is run again when the turn resumes).
func (l *Loop) spawn(j toolJob, a agentArgs) {
	s := j.s
	lim := l.opts.Subagents.withDefaults()
	depth, ceiling := 1, []string{s.st.Agent}
	if sp := s.st.Spawn; sp != nil {
		depth = sp.Depth + 1
		ceiling = append(ceiling, sp.Ceiling...)
	}
	mode := WorkspaceOwn
	switch a.Workspace {
	case "", "own":
	case "parent":
		mode = WorkspaceParent
	default:
		l.agentDone(j, ErrorResult(fmt.Sprintf("error: agent: workspace %q is not one of own, parent", a.Workspace)))
		return
	}
	var refuse string
	switch {
	case strings.TrimSpace(a.Task) == "":
		refuse = "spawn needs a task: say what the child should do"
	case depth > lim.MaxDepth:
		refuse = fmt.Sprintf("subagents may nest %d deep and a child of this session would be %d deep: do the work here", lim.MaxDepth, depth)
	case len(s.st.Children)+j.t.spawning >= lim.MaxChildren:
		refuse = fmt.Sprintf("this session already spawned %d subagents, the most it may (subagents.max_children in agnx.yaml): "+
			"give one of them more work with send", len(s.st.Children)+j.t.spawning)
	}
	if refuse == "" {
		refuse = l.overTokens(s, lim)
	}
	if refuse != "" {
		l.agentDone(j, ErrorResult("error: agent: "+refuse))
		return
	}
	name := a.Agent
	if name == "" {
		name = s.st.Agent
	}
	j.t.spawning++ // counted while its agent is built
	l.withAgent(name, func(ag *LoadedAgent, err error) {
		j.t.spawning--
		if j.s.turn != j.t || l.sessions[s.st.ID] != s {
			return
		}
		if err != nil {
			l.agentDone(j, ErrorResult("error: agent: "+err.Error()))
			return
		}
		sp := &Spawn{Parent: s.st.ID, Call: j.call.ID, Depth: depth, Ceiling: ceiling, Workspace: mode}
		id := l.createChild(ag, sp, viewer(s.st, j.t.agent).Principal, a.Task)
		w := jsonw.Writer{}
		w.Object()
		w.Key("spawned").String(id)
		w.Key("agent").String(ag.Spec.Name)
		w.EndObject()
		l.agentDone(j, Result{Details: w.B, Content: fmt.Sprintf("Spawned subagent %s (agent %s). It works on its own: "+
			"call agent with action wait to get its answer, or it reports back here when it finishes.", id, ag.Spec.Name)})
	})
}

// createChild records a child session and its task in the current batch
// and returns its id; its turn starts once the batch is committed. The
// child speaks for p: whom its parent's turn speaks for (a webhook's turn
// in a chat's session spawns a webhook's child).
func (l *Loop) createChild(ag *LoadedAgent, sp *Spawn, p agents.Principal, task string) string {
	c := l.newSession(ag.Spec, Event{Gateway: GatewaySubagent, ChatID: sp.Parent, Spawn: sp, Principal: p})
	l.record(c, Event{Type: EvUserMessage, Content: task, Origin: OriginParent})
	return c.st.ID
}

// GatewaySubagent is the gateway of a child session; its chat id is the
// parent session's id.
const GatewaySubagent = "agent"

// child returns the child id of s, loaded; an error the model reads when
// it is not one of s's children or is gone.
func (l *Loop) child(s *session, id string) (*session, error) {
	if id == "" {
		return nil, errors.New("give the child's session id (id)")
	}
	if !s.st.hasChild(id) {
		return nil, fmt.Errorf("%s is not a subagent of this session: list them with action list", id)
	}
	c, err := l.load(id)
	if err != nil {
		return nil, fmt.Errorf("subagent %s is gone (%v): spawn a new one", id, err)
	}
	return c, nil
}

// sendChild gives a child a follow-up message: it starts the child's next
// turn, or waits for the running one to end.
func (l *Loop) sendChild(j toolJob, a agentArgs) {
	c, err := l.child(j.s, a.ID)
	switch {
	case err != nil:
	case strings.TrimSpace(a.Message) == "":
		err = errors.New("send needs a message")
	case c.st.Ended:
		err = fmt.Errorf("subagent %s is closed: spawn a new one", a.ID)
	default:
		if msg := l.overTokens(j.s, l.opts.Subagents.withDefaults()); msg != "" {
			err = errors.New(msg)
		}
	}
	if err != nil {
		l.agentDone(j, ErrorResult("error: agent: "+err.Error()))
		return
	}
	l.record(c, Event{Type: EvUserMessage, Content: a.Message, Origin: OriginParent})
	l.agentDone(j, Result{Content: fmt.Sprintf("Sent to subagent %s; it works on it now or after its current turn. "+
		"Call agent with action wait to get its answer.", a.ID)})
}

// closeChild ends a child: its running turn is cancelled, and it takes no
// more messages.
func (l *Loop) closeChild(j toolJob, a agentArgs) {
	c, err := l.child(j.s, a.ID)
	if err != nil {
		l.agentDone(j, ErrorResult("error: agent: "+err.Error()))
		return
	}
	if c.st.Ended {
		l.agentDone(j, Result{Content: fmt.Sprintf("Subagent %s was already closed.", a.ID)})
		return
	}
	if c.st.TurnActive {
		if t := c.turn; t != nil && t.partial.Len() > 0 {
			l.record(c, Event{Type: EvAssistant, Agent: c.st.Agent, Content: t.partial.String()})
		}
		c.closing = true // its parent knows
		l.endTurn(c, TurnCancelled)
		c.closing = false
	}
	l.record(c, Event{Type: EvSessionEnd, Reason: EndTerminated})
	l.checkpoint(c)
	l.agentDone(j, Result{Content: fmt.Sprintf("Closed subagent %s.", a.ID)})
}

// overTokens is why s's children may not use more tokens, "" when they
// may. Children's usage is read from their records: a few small reads.
func (l *Loop) overTokens(s *session, lim SubagentLimits) string {
	used := 0
	for _, ch := range s.st.Children {
		id := ch.ID
		if c := l.sessions[id]; c != nil {
			used += c.st.Usage.Total()
			continue
		}
		if info, err := ReadSession(l.opts.Store, id); err == nil {
			used += info.Usage.Total()
		}
	}
	if used < lim.MaxTokens {
		return ""
	}
	return fmt.Sprintf("this session's subagents used %d tokens, their limit (subagents.max_tokens in agnx.yaml): "+
		"finish with what they found", used)
}

// refuseSubagentTokens fails a child's turn that would start when the
// children of its parent used their tokens; it reports whether it did.
func (l *Loop) refuseSubagentTokens(s *session) bool {
	sp := s.st.Spawn
	if sp == nil {
		return false
	}
	p, err := l.load(sp.Parent)
	if err != nil {
		return false // a child outlives a deleted parent, unbounded by it
	}
	msg := l.overTokens(p, l.opts.Subagents.withDefaults())
	if msg == "" {
		return false
	}
	l.record(s, Event{Type: EvError, Code: CodeSubagentTokens, Content: "the parent's limit is reached: " + msg})
	l.endTurn(s, TurnFailed)
	return true
}

// CodeSubagentTokens is the code of the error a child's turn fails with
// when the children of its parent used their tokens.
const CodeSubagentTokens = "subagent_tokens"
