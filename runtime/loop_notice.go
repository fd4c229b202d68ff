package runtime

import (
	"context"
	"errors"

	"github.com/agnx-lite/agnx-lite/storage"
)

// Notice is a message the agent's side says to a session outside any
// model call: a schedule's reminder, a finished process, a notification.
type Notice struct {
	Content string
	// Origin says what sent it ("schedule", "process", "notify"); it must
	// not be empty.
	Origin string
	// Commit, when set, runs in the transaction that stores the notice
	// (see Input.Commit).
	Commit func(*storage.Tx) error
}

// Notice appends n to the session as an assistant_response carrying its
// origin, and returns its seq once committed. It starts no turn; a gateway
// following the session delivers it to its chat as it delivers answers. A
// turn running in the session gets it in its context after its end (it is
// never put between a model call and its tool results).
func (l *Loop) Notice(ctx context.Context, sessionID string, n Notice) (uint64, error) {
	if n.Content == "" {
		return 0, errors.New("the notice is empty: give it some text")
	}
	if n.Origin == "" {
		return 0, errors.New("a notice needs an origin (schedule, process, notify)")
	}
	reply := make(chan result[uint64], 1)
	return call(ctx, l, &noticeReq{sid: sessionID, n: n, reply: reply}, reply)
}

type noticeReq struct {
	sid   string
	n     Notice
	reply chan result[uint64]
}

func (r *noticeReq) handle(l *Loop) {
	if l.draining {
		r.reply <- result[uint64]{err: ErrClosed}
		return
	}
	s, err := l.loadOpen(r.sid)
	if err != nil {
		r.reply <- result[uint64]{err: err}
		return
	}
	l.record(s, Event{Type: EvAssistant, Agent: s.st.Agent, Content: r.n.Content, Origin: r.n.Origin})
	if r.n.Commit != nil {
		l.ops = append(l.ops, r.n.Commit)
	}
	seq := s.st.LastSeq
	l.afterCommit(func(err error) { r.reply <- result[uint64]{v: seq, err: err} })
}

// TurnEnd reports a turn that ended, once its turn_end is committed (see
// Options.TurnEnded).
type TurnEnd struct {
	SessionID string
	Agent     string
	Gateway   string
	ChatID    string
	// Reason is the outcome (TurnCompleted, TurnFailed, ...).
	Reason string
	// Origin is the Input.Origin of the message that started the turn:
	// empty when a person sent it.
	Origin string
	// Answer is the turn's last answer, at most maxTurnEndAnswer bytes
	// (cut at a rune boundary); empty when it gave none.
	Answer string
	// Error is the sentence of the turn's last error event (a failed
	// turn's cause: its agent's daily token budget, the model failing),
	// at most maxLastError bytes; empty when it had none.
	Error string
	// Watched is true when a live subscriber (a gateway's watcher, a
	// client's stream) followed the session as the turn ended.
	Watched bool
}

// maxTurnEndAnswer bounds TurnEnd.Answer: a notice is short.
const maxTurnEndAnswer = 4 << 10

// turnEnded tells Options.TurnEnded of the turn s just ended, after the
// commit; origin and lastErr are the turn's, read before its turn_end
// (which starts the next turn's when messages wait).
func (l *Loop) turnEnded(s *session, reason, origin, lastErr string) {
	f := l.opts.TurnEnded
	if f == nil {
		return
	}
	te := TurnEnd{SessionID: s.st.ID, Agent: s.st.Agent, Gateway: s.st.Gateway, ChatID: s.st.ChatID,
		Reason: reason, Origin: origin, Watched: len(s.subs) > 0}
	if ans := s.st.lastAnswer(); ans != "" {
		te.Answer = cutRunes(ans, maxTurnEndAnswer)
	}
	te.Error = lastErr
	l.afterCommit(func(err error) {
		if err == nil {
			f(te)
		}
	})
}

// EventReader reads a session's durable events after a seq, as
// Loop.Events does.
type EventReader interface {
	Events(ctx context.Context, sessionID string, after uint64, fn func(Event) error) error
}

// UnseenFrom is where a gateway starts delivering a session it did not
// follow, reading its events after `after`: just before the first event
// that a schedule, webhook, process or notice sent (an Origin) since the
// last message a person sent (that person was answered where they wrote);
// last when there is none.
func UnseenFrom(ctx context.Context, r EventReader, sessionID string, after, last uint64) (uint64, error) {
	from, found := last, false
	err := r.Events(ctx, sessionID, after, func(e Event) error {
		switch {
		case e.Type == EvUserMessage && e.Origin == "":
			from, found = e.Seq, false
		case e.Origin != "" && !found && e.Seq > 0:
			from, found = e.Seq-1, true
		}
		return nil
	})
	if !found {
		return last, err
	}
	return from, err
}
