package runtime

import "context"

// DiscardUnanswered removes the session, as DeleteSession does, when
// nothing in it came from a model: at most one turn, and that one ended
// without an answer, a tool call or a summary (its provider was
// unreachable, refused the key or lacks the model), or no turn at all.
// It reports whether it removed it; a session with anything more, or with
// a turn running, queued or waiting for approval, is kept.
//
// It is for the fronts that start a session on their own (the CLI chat,
// a gateway's chat, the OpenAI endpoint's caller session), once they have
// told the user why the turn failed: such a session holds only the user's
// message, which Send made durable before the model was called so that a
// crash loses nothing. A session a client asked for by name (POST
// /api/v1/sessions) is the client's to keep or delete.
//
// The check and the removal are one step on the loop: a message that
// arrives first keeps the session, one that arrives after finds it gone
// (ErrSessionNotFound) and its front starts a new one.
func (l *Loop) DiscardUnanswered(ctx context.Context, sessionID string) (bool, error) {
	reply := make(chan result[bool], 1)
	return call(ctx, l, &discardReq{sid: sessionID, reply: reply}, reply)
}

type discardReq struct {
	sid   string
	reply chan result[bool]
}

func (r *discardReq) handle(l *Loop) {
	s, err := l.load(r.sid)
	if err != nil {
		r.reply <- result[bool]{err: err}
		return
	}
	if s.turn != nil || s.queued || s.compacting != nil || !s.st.unanswered() {
		r.reply <- result[bool]{}
		return
	}
	l.log.Info("session removed: its first turn never reached a model", "session", r.sid)
	l.deleteSession(r.sid, func(err error) { r.reply <- result[bool]{v: err == nil, err: err} })
}

// unanswered reports whether nothing in the session came from a model and
// nothing waits: at most one user message and one turn, no answer, tool
// call or summary, no background notes, no turn active or pending.
func (s *state) unanswered() bool {
	if s.TurnActive || len(s.Pending) > 0 || len(s.Approvals) > 0 || len(s.OpenCalls) > 0 ||
		s.Summary != "" || s.Turns > 1 || s.WindowSeq > 1 || len(s.Silent) > 0 || len(s.History) > 1 {
		return false
	}
	return len(s.History) == 0 || s.History[0].Role == RoleUser
}
