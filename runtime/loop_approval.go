package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNoApproval is returned by Approve when the call waits for no decision.
var ErrNoApproval = errors.New("no approval is pending for that call")

// armApproval starts the timer that denies a call nobody answers. A call
// that waited across a restart keeps its original deadline.
func (l *Loop) armApproval(s *session, t *turn, a Approval) {
	if t.timers == nil {
		t.timers = make(map[string]*time.Timer)
	}
	wait := max(l.opts.ApprovalTimeout-l.now().Sub(a.At), 0)
	sid, turnID, callID := s.st.ID, t.id, a.CallID
	t.timers[callID] = time.AfterFunc(wait, func() {
		_ = l.post(context.Background(), &approvalTimeout{sid: sid, turn: turnID, callID: callID})
	})
}

type approvalTimeout struct {
	sid    string
	turn   uint64
	callID string
}

func (r *approvalTimeout) handle(l *Loop) {
	s := l.sessions[r.sid]
	if s == nil || s.turn == nil || s.turn.id != r.turn {
		return
	}
	if _, ok := s.st.approval(r.callID); ok {
		l.decide(s, r.callID, DenyCall, "timeout")
	}
}

// Approve answers a call waiting for a decision: allow_once, allow_always
// (this call's type:invocation for every later call of the agent: see
// allowAlways) or deny.
func (l *Loop) Approve(ctx context.Context, sessionID, callID, decision string) error {
	switch decision {
	case AllowOnce, AllowAlways, DenyCall:
	default:
		return fmt.Errorf("decision %q is not one of allow_once, allow_always, deny", decision)
	}
	reply := make(chan result[struct{}], 1)
	_, err := call(ctx, l, &approveReq{sid: sessionID, callID: callID, decision: decision, reply: reply}, reply)
	return err
}

type approveReq struct {
	sid, callID, decision string
	reply                 chan result[struct{}]
}

func (r *approveReq) handle(l *Loop) {
	s, err := l.load(r.sid)
	if err != nil {
		r.reply <- result[struct{}]{err: err}
		return
	}
	if _, ok := s.st.approval(r.callID); !ok {
		r.reply <- result[struct{}]{err: ErrNoApproval}
		return
	}
	if s.turn == nil || s.turn.agent == nil {
		// The call waits from before a restart and its turn has not taken
		// it up yet (it waits for a slot, or for its agent's build): the
		// answer is kept until it has.
		s.early = append(s.early, r)
		return
	}
	l.decide(s, r.callID, r.decision, "user")
	l.afterCommit(func(err error) { r.reply <- result[struct{}]{err: err} })
}

// takeEarly answers what came before the turn could take it: once the
// turn runs, each answer is handled as if it came now; when the turn
// ended instead (or its session was dropped), with why, or ErrNoApproval.
func (l *Loop) takeEarly(s *session, why error) {
	early := s.early
	s.early = nil
	for _, r := range early {
		if why != nil {
			r.reply <- result[struct{}]{err: why}
			continue
		}
		r.handle(l)
	}
}

// decide records a decision and acts on it: an allowed call is queued
// (after the commit, and once a parked turn has a slot again), a denied
// one gets its error result.
func (l *Loop) decide(s *session, callID, decision, reason string) {
	t := s.turn
	if tm := t.timers[callID]; tm != nil {
		tm.Stop()
		delete(t.timers, callID)
	}
	l.record(s, Event{Type: EvApprovalDecision, CallID: callID, Decision: decision, Reason: reason})
	var c ToolCall
	for _, oc := range s.st.OpenCalls {
		if oc.ID == callID {
			c = oc
		}
	}
	j := toolJob{s: s, t: t, call: c}
	if decision == AllowAlways {
		l.allowAlways(s, c)
	}
	if decision == DenyCall {
		msg := "error: the user denied this call"
		if reason == "timeout" {
			msg = fmt.Sprintf("error: nobody answered the approval request within %s, so the call was denied", l.opts.ApprovalTimeout)
		}
		l.toolResult(j, ErrorResult(msg))
		return
	}
	l.afterCommit(func(err error) {
		if err == nil && s.turn == t {
			// A parked turn runs it once it has a slot again.
			l.resume(s, func() {
				l.tools.queue = append(l.tools.queue, j)
				l.runTools()
			})
		}
	})
}
