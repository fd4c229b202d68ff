package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNoApproval is returned by Approve when the call waits for no decision.
var ErrNoApproval = errors.New("no approval is pending for that call")

// ErrOtherApproval is returned by Approve when the session waits for a
// decision, but on another call.
var ErrOtherApproval = errors.New("the session waits for a decision on another call")

// armApproval starts the timer that denies a call nobody answers, when
// ApprovalTimeout is set. A call that waited across a restart keeps its
// original deadline.
func (l *Loop) armApproval(s *session, t *turn, a Approval) {
	if l.opts.ApprovalTimeout <= 0 {
		return // it waits until answered
	}
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
		err := ErrNoApproval
		if len(s.st.Approvals) > 0 {
			err = ErrOtherApproval
		}
		r.reply <- result[struct{}]{err: err}
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
	subject := s.st.approvalSubject(callID)
	l.record(s, Event{Type: EvApprovalDecision, CallID: callID, Decision: decision, Reason: reason})
	if l.answerAsk(s, callID, decision) {
		return
	}
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
		msg := DeniedResult(subject)
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

// DeniedResult is the tool result of a call the user denied: Agnx's
// sentence, which tells the model to try something else.
func DeniedResult(command string) string {
	return "Command '" + command + "' was denied by the user. Please try a different approach."
}

// PendingApproval is a call waiting for a user's decision, as a session's
// info shows it.
type PendingApproval struct {
	CallID  string
	Tool    string
	Command string    // what the user is asked about (the approval's subject)
	At      time.Time // when it was asked
	// ExpiresAt is when it is denied unanswered; zero when it never is
	// (the default: Options.ApprovalTimeout 0).
	ExpiresAt time.Time
}

// pending lists the session's calls waiting for a decision, oldest first.
func (l *Loop) pending(st *state) []PendingApproval {
	if len(st.Approvals) == 0 {
		return nil
	}
	out := make([]PendingApproval, len(st.Approvals))
	for i, a := range st.Approvals {
		out[i] = PendingApproval{CallID: a.CallID, Tool: a.Tool, Command: a.Subject, At: a.At}
		if l.opts.ApprovalTimeout > 0 {
			out[i].ExpiresAt = a.At.Add(l.opts.ApprovalTimeout)
		}
	}
	return out
}

// Pending lists the calls of the session waiting for a user's decision,
// oldest first; none when its turn waits for nothing. It loads the session
// when it is not in memory. GET .../sessions/{id} shows the first one.
func (l *Loop) Pending(ctx context.Context, sessionID string) ([]PendingApproval, error) {
	reply := make(chan result[[]PendingApproval], 1)
	return call(ctx, l, &pendingReq{sid: sessionID, reply: reply}, reply)
}

type pendingReq struct {
	sid   string
	reply chan result[[]PendingApproval]
}

func (r *pendingReq) handle(l *Loop) {
	s, err := l.load(r.sid)
	if err != nil {
		r.reply <- result[[]PendingApproval]{err: err}
		return
	}
	r.reply <- result[[]PendingApproval]{v: l.pending(s.st)}
}
