package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrTurnActive is returned by EndSession and ExpireSession while the
// session has a turn running or a call waiting for a person's decision.
var ErrTurnActive = errors.New("the session has a turn running or a call waiting for approval: wait for it to end or cancel it")

// The reasons a session_end records, as in Agnx.
const (
	EndCompleted  = "completed"
	EndTerminated = "terminated"
	EndTimeout    = "timeout"
	EndError      = "error"
)

// EndSession records session_end{reason} (completed, terminated, timeout
// or error): the session takes no more messages, and a gateway's next
// message for its chat starts a new one. Ending an ended session does
// nothing. It refuses with ErrTurnActive while a turn runs.
func (l *Loop) EndSession(ctx context.Context, sessionID, reason string) error {
	switch reason {
	case EndCompleted, EndTerminated, EndTimeout, EndError:
	default:
		return fmt.Errorf("a session ends as completed, terminated, timeout or error, not %q", reason)
	}
	reply := make(chan result[bool], 1)
	_, err := call(ctx, l, &endReq{sid: sessionID, reason: reason, reply: reply}, reply)
	return err
}

// ExpireSession ends the session with reason timeout if nothing happened
// in it since idleSince: no event after that time, no turn running, no
// call waiting for approval. It reports whether it ended it; the check and
// the end are one step on the loop, so a message that arrives meanwhile
// keeps the session open.
func (l *Loop) ExpireSession(ctx context.Context, sessionID string, idleSince time.Time) (bool, error) {
	reply := make(chan result[bool], 1)
	return call(ctx, l, &endReq{sid: sessionID, reason: EndTimeout, idle: idleSince, reply: reply}, reply)
}

type endReq struct {
	sid    string
	reason string
	idle   time.Time // zero: end whatever the last activity
	reply  chan result[bool]
}

func (r *endReq) handle(l *Loop) {
	s, err := l.load(r.sid)
	switch {
	case err != nil:
		r.reply <- result[bool]{err: err}
		return
	case s.st.Ended:
		r.reply <- result[bool]{}
		return
	case s.st.TurnActive || len(s.st.Approvals) > 0 || s.turn != nil:
		if !r.idle.IsZero() {
			r.reply <- result[bool]{} // busy is not idle: not an error for a sweep
			return
		}
		r.reply <- result[bool]{err: ErrTurnActive}
		return
	case !r.idle.IsZero() && !s.st.Updated.Before(r.idle):
		r.reply <- result[bool]{}
		return
	}
	l.record(s, Event{Type: EvSessionEnd, Reason: r.reason})
	l.checkpoint(s) // a reload sees the end without replaying
	l.afterCommit(func(err error) { r.reply <- result[bool]{v: err == nil, err: err} })
}
