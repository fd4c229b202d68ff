package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Question is what a running tool call asks permission for (a coding
// worker's request to run a command or write a file): the call as a
// policy sees it, a tool name and what it acts on.
type Question struct {
	Tool    string
	Subject string
}

// maxProgress bounds one progress line.
const maxProgress = 2 << 10

// errNotACall is what Ask answers outside a tool call of a loop.
var errNotACall = errors.New("asking for permission needs a tool call of a running session")

// Ask asks, from inside a running tool call, whether something the call
// wants to do may happen. The session agent's policy decides first (and
// a subagent's ceiling: see ceilingDecide), as for a call of q.Tool
// acting on q.Subject: Allow answers AllowOnce and Deny DenyCall at once.
// Only what the policy would ask about goes to a person: an
// approval_required event whose CallID is the running call's id followed
// by "." and a number, answered like any approval (Loop.Approve). The
// turn gives its slot back while it waits. It returns AllowOnce,
// AllowAlways or DenyCall, or an error when ctx ends or ctx is not a tool
// call's.
func Ask(ctx context.Context, q Question) (string, error) {
	return AskAll(ctx, []Question{q})
}

// maxReadings bounds the questions of one AskAll.
const maxReadings = 64

// AskAll is Ask for something that can be read several ways (a coding
// worker's permission request, whose declared kind need not say what it
// would do: each command, path or address it names is a reading). The
// policy decides every reading: one that it denies denies the whole (deny
// wins); when it allows them all, AllowOnce. Otherwise a person is asked
// once, about the first reading the policy would ask about, so callers
// list the readings most dangerous first. qs holds 1 to 64 questions.
func AskAll(ctx context.Context, qs []Question) (string, error) {
	if len(qs) == 0 || len(qs) > maxReadings {
		return "", fmt.Errorf("a question has 1 to %d readings, not %d", maxReadings, len(qs))
	}
	info, ok := CallFrom(ctx)
	if !ok || info.loop == nil {
		return "", errNotACall
	}
	reply := make(chan result[string], 1)
	r := &askReq{sid: info.SessionID, turn: info.turn, callID: info.CallID, qs: slices.Clone(qs), reply: reply}
	return call(ctx, info.loop, r, reply)
}

type askReq struct {
	sid    string
	turn   uint64
	callID string
	qs     []Question
	reply  chan result[string]
}

func (r *askReq) handle(l *Loop) {
	s := l.sessions[r.sid]
	if s == nil || s.turn == nil || s.turn.id != r.turn || s.turn.agent == nil {
		r.reply <- result[string]{err: errors.New("the tool call ended before its question could be asked")}
		return
	}
	t := s.turn
	var ask *Question // the first reading a person must answer
	for i, q := range r.qs {
		pc := agents.Call{Tool: q.Tool, Subject: q.Subject}
		d, _ := l.decideFor(s, t, pc, true)
		if d == agents.Ask && (s.st.alwaysAllowed(q.Tool, q.Subject) || l.alwaysAllowed(s.st.Agent, pc)) {
			d = agents.Allow
		}
		switch {
		case d == agents.Deny:
			r.reply <- result[string]{v: DenyCall}
			return
		case d == agents.Ask && ask == nil:
			ask = &r.qs[i]
		}
	}
	if ask == nil {
		r.reply <- result[string]{v: AllowOnce}
		return
	}
	t.asked++
	id := r.callID + "." + strconv.Itoa(t.asked)
	if t.asks == nil {
		t.asks = make(map[string]chan result[string])
	}
	t.asks[id] = r.reply
	l.record(s, Event{Type: EvApprovalRequired, CallID: id, ToolName: ask.Tool, Content: ask.Subject})
	a, _ := s.st.approval(id)
	l.armApproval(s, t, a)
	l.park(s)
	l.subagentBlocked(s)
}

// answerAsk hands a person's decision to the running call that asked,
// once its turn holds a slot again; it reports whether callID was such a
// question.
func (l *Loop) answerAsk(s *session, callID, decision string) bool {
	t := s.turn
	reply, ok := t.asks[callID]
	if !ok {
		return false
	}
	delete(t.asks, callID)
	l.afterCommit(func(err error) {
		if err != nil || s.turn != t {
			reply <- result[string]{err: errors.New("the decision could not be stored: ask again")}
			return
		}
		l.resume(s, func() { reply <- result[string]{v: decision} })
	})
	return true
}

// endAsks settles the questions of a call that ended (its result came
// in, or a restart interrupted it) with a deny: nobody is left to hear
// the answer.
func (l *Loop) endAsks(s *session, callID string) {
	prefix := callID + "."
	for i := 0; i < len(s.st.Approvals); {
		a := s.st.Approvals[i]
		if len(a.CallID) <= len(prefix) || a.CallID[:len(prefix)] != prefix {
			i++
			continue
		}
		if t := s.turn; t != nil {
			delete(t.asks, a.CallID)
			if tm := t.timers[a.CallID]; tm != nil {
				tm.Stop()
				delete(t.timers, a.CallID)
			}
		}
		l.record(s, Event{Type: EvApprovalDecision, CallID: a.CallID, Decision: DenyCall, Reason: "call_ended"})
	}
}

// Progress tells the live followers of the call's session what a long
// call is doing, with an ephemeral tool_progress event; it is never
// stored. Callers coalesce: a few a second at most. When the loop's inbox
// is full the line is dropped rather than the tool held up.
func Progress(ctx context.Context, text string) {
	info, ok := CallFrom(ctx)
	if !ok || info.loop == nil || text == "" {
		return
	}
	r := &progressReq{sid: info.SessionID, turn: info.turn, callID: info.CallID, tool: info.tool, text: cutRunes(text, maxProgress)}
	select {
	case info.loop.inbox <- r:
	default:
	}
}

type progressReq struct {
	sid, callID, tool, text string
	turn                    uint64
}

func (r *progressReq) handle(l *Loop) {
	if s := l.sessions[r.sid]; s != nil && s.turn != nil && s.turn.id == r.turn {
		s.publish(Event{Type: EvToolProgress, CallID: r.callID, ToolName: r.tool, Content: r.text})
	}
}
