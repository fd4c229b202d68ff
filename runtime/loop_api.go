package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/storage"
)

// NewSession says what a new session is for.
type NewSession struct {
	Agent   string
	Gateway string // "cli", "http", "telegram", ...
	ChatID  string
	// Principal is who the session speaks for; none: the one Gateway and
	// ChatID imply (agents.PrincipalOf).
	Principal agents.Principal
	// Spec, when the caller has read the agent's spec, starts the session
	// at once from it; without it the session waits for the agent to be
	// built (and fails as the build does). A gateway admitting a chat's
	// first message passes it: its poller must not wait for a build.
	Spec *agents.Agent
}

// Input is one message from a user.
type Input struct {
	Content    string
	SenderID   string
	SenderName string
	// Cursor, when set, is written to the store's kv in the same
	// transaction as the message: a gateway's position in its source (the
	// Telegram update offset) moves exactly when the message is stored, so
	// after a crash nothing is lost and nothing is taken twice.
	Cursor *Cursor
	// Commit, when set, runs in the transaction that stores the message:
	// a schedule's run record, a webhook's delivery id, written exactly
	// when the message is (see Cursor). It must only write small values
	// and return quickly; an error fails the whole group commit.
	Commit func(*storage.Tx) error
	// Origin says what sent the message when no person did: "schedule",
	// "heartbeat", "webhook", "process". It is stored with the message
	// (JSON "origin") and reported with the turn's end (TurnEnd).
	Origin string
	// Keep, when set, stores the message without starting a turn (a group
	// message the agent listens to but does not answer): KeepPassive as a
	// user_message that joins the conversation, KeepSilent as a
	// silent_message the model sees only as background.
	Keep Keep
}

// Keep says how a message that starts no turn is stored.
type Keep int

// The values of Input.Keep.
const (
	KeepNone Keep = iota
	KeepPassive
	KeepSilent
)

// Cursor is one kv entry written with a message.
type Cursor struct {
	Key   string
	Value []byte
}

// CreateSession starts a session with an agent. It returns once the
// session_start event is committed.
func (l *Loop) CreateSession(ctx context.Context, ns NewSession) (SessionInfo, error) {
	reply := make(chan result[SessionInfo], 1)
	return call(ctx, l, &createReq{ns: ns, reply: reply}, reply)
}

type createReq struct {
	ns    NewSession
	reply chan result[SessionInfo]
}

func (r *createReq) handle(l *Loop) {
	if spec := r.ns.Spec; spec != nil && spec.Name == r.ns.Agent {
		r.create(l, spec, nil)
		return
	}
	l.withAgent(r.ns.Agent, func(ag *LoadedAgent, err error) {
		if err != nil {
			r.create(l, nil, err)
			return
		}
		r.create(l, ag.Spec, nil)
	})
}

// create starts the session once its agent's spec is known.
func (r *createReq) create(l *Loop, spec *agents.Agent, err error) {
	if err != nil {
		r.reply <- result[SessionInfo]{err: err}
		return
	}
	p := principalOr(r.ns.Principal, r.ns.Gateway, r.ns.ChatID, "")
	s := l.newSession(spec, Event{Gateway: r.ns.Gateway, ChatID: r.ns.ChatID, Principal: p})
	l.afterCommit(func(err error) {
		r.reply <- result[SessionInfo]{v: s.st.info(), err: err}
	})
}

// newSession records a new session of the agent spec describes in the
// current batch, with start (its gateway, chat and spawn link) as its
// session_start.
func (l *Loop) newSession(spec *agents.Agent, start Event) *session {
	id := newSessionID(l.now())
	s := &session{st: &state{ID: id}, budget: spec.HistoryBudget()}
	l.sessions[id] = s
	info := s.st.info()
	meta := info.appendJSON(nil)
	l.ops = append(l.ops, func(tx *storage.Tx) error { return tx.CreateSession(id, meta) })
	start.Type, start.Agent, start.OnDisconnect = EvSessionStart, spec.Name, spec.Session.OnDisconnect
	l.record(s, start)
	l.owners.Store(id, s.st.ref())
	return s
}

// Sent is what Send did with a message.
type Sent struct {
	// Seq is the user_message event's seq.
	Seq uint64
	// Queued is true when a turn was running: the message starts the next
	// turn, after that one's turn_end.
	Queued bool
}

// Send appends a user message and starts a turn, or queues the message for
// the next turn when one is running; with in.Keep set it only stores it. It returns once the message is
// committed: from then on it survives a crash.
func (l *Loop) Send(ctx context.Context, sessionID string, in Input) (Sent, error) {
	if in.Content == "" {
		return Sent{}, errors.New("the message is empty: type something to send")
	}
	reply := make(chan result[Sent], 1)
	return call(ctx, l, &sendReq{sid: sessionID, in: in, reply: reply}, reply)
}

type sendReq struct {
	sid   string
	in    Input
	reply chan result[Sent]
}

func (r *sendReq) handle(l *Loop) {
	if l.draining {
		r.reply <- result[Sent]{err: ErrClosed}
		return
	}
	if l.busy {
		r.reply <- result[Sent]{err: ErrBusy}
		return
	}
	s, err := l.loadOpen(r.sid)
	if err != nil {
		r.reply <- result[Sent]{err: err}
		return
	}
	if lost := s.lost; lost != nil {
		s.lost = nil // only the next message may be its resend
		if r.in.Keep == KeepNone && r.in.Content == lost.content && !s.st.TurnActive {
			r.reply <- result[Sent]{err: &TurnLostError{Seq: lost.seq, Why: lost.why}}
			return
		}
	}
	queued := s.st.TurnActive && r.in.Keep == KeepNone
	e := Event{Type: EvUserMessage, Content: r.in.Content, SenderID: r.in.SenderID, SenderName: r.in.SenderName,
		Passive: r.in.Keep == KeepPassive, Origin: r.in.Origin}
	if r.in.Keep == KeepSilent {
		e.Type = EvSilentMessage
	}
	l.record(s, e)
	if c := r.in.Cursor; c != nil {
		key, val := c.Key, append([]byte(nil), c.Value...)
		l.ops = append(l.ops, func(tx *storage.Tx) error { return tx.PutKV(key, val) })
	}
	if r.in.Commit != nil {
		l.ops = append(l.ops, r.in.Commit)
	}
	sent := Sent{Seq: s.st.LastSeq, Queued: queued}
	l.afterCommit(func(err error) { r.reply <- result[Sent]{v: sent, err: err} })
}

// loadOpen returns the session to write a message to: loaded, and not
// ended.
func (l *Loop) loadOpen(id string) (*session, error) {
	s, err := l.load(id)
	if err == nil && s.st.Ended {
		err = fmt.Errorf("%w: start a new one", ErrSessionEnded)
	}
	return s, err
}

// Cancel stops the session's running turn; it reports whether there was one.
func (l *Loop) Cancel(ctx context.Context, sessionID string) (bool, error) {
	reply := make(chan result[bool], 1)
	return call(ctx, l, &cancelReq{sid: sessionID, reply: reply}, reply)
}

type cancelReq struct {
	sid   string
	reply chan result[bool]
}

func (r *cancelReq) handle(l *Loop) {
	s := l.sessions[r.sid]
	if s == nil || !s.st.TurnActive {
		r.reply <- result[bool]{}
		return
	}
	if t := s.turn; t != nil && t.partial.Len() > 0 {
		// Keep what the user already saw of the answer.
		l.record(s, Event{Type: EvAssistant, Agent: s.st.Agent, Content: t.partial.String()})
	}
	l.endTurn(s, TurnCancelled)
	l.afterCommit(func(err error) { r.reply <- result[bool]{v: err == nil, err: err} })
}

// DeleteSession removes a session and its whole log, its archive
// file included.
func (l *Loop) DeleteSession(ctx context.Context, sessionID string) error {
	reply := make(chan result[struct{}], 1)
	_, err := call(ctx, l, &deleteReq{sid: sessionID, reply: reply}, reply)
	return err
}

type deleteReq struct {
	sid   string
	reply chan result[struct{}]
}

func (r *deleteReq) handle(l *Loop) {
	l.deleteSession(r.sid, func(err error) { r.reply <- result[struct{}]{err: err} })
}

// deleteSession removes session id and its log in the next group commit
// and calls done with the commit's outcome.
func (l *Loop) deleteSession(id string, done func(error)) {
	if s := l.sessions[id]; s != nil {
		for _, sub := range s.subs {
			sub.markDeleted()
		}
		l.drop(s, nil)
		delete(l.dirty, s)
	}
	delete(l.failedTurns, id) // nothing left to settle
	l.owners.Delete(id)
	l.ops = append(l.ops, func(tx *storage.Tx) error {
		if err := tx.DeleteSession(id); err != nil {
			return err
		}
		return tx.DeleteKV(archiveKey(id))
	})
	l.afterCommit(func(err error) {
		if errors.Is(err, storage.ErrSessionNotFound) {
			err = ErrSessionNotFound
		}
		if err == nil {
			// One unlink: the archived events go with the session.
			if rerr := removeArchive(ArchiveDir(l.opts.Store), id); rerr != nil {
				l.log.Warn("cannot delete the archive of a deleted session", "session", id, "err", rerr)
			}
		}
		done(err)
	})
}
