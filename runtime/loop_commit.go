package runtime

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/storage"
)

// record appends a durable event to the session: it is folded into the
// state at once (so later handlers in the same batch see it) and queued for
// the next group commit. Subscribers see it only after the commit.
func (l *Loop) record(s *session, e Event) {
	wasActive := s.st.TurnActive
	e.Seq = s.st.LastSeq + 1
	e.Time = l.now()
	s.st.apply(&e)
	// Encoded after room for the store's key, which keeps the buffer.
	data := e.AppendJSON(make([]byte, storage.EventHeader, storage.EventHeader+eventSizeHint(&e)))
	id, seq := s.st.ID, e.Seq
	l.ops = append(l.ops, func(tx *storage.Tx) error { return tx.AppendEventOwned(id, seq, data) })
	if s.st.TurnActive != wasActive {
		active := s.st.TurnActive
		l.ops = append(l.ops, func(tx *storage.Tx) error { return tx.SetActive(id, active) })
	}
	l.want(s)
	l.publish = append(l.publish, published{s, e})
	l.dirty[s] = struct{}{}
	s.used = e.Time
	s.sinceCP++
	if s.sinceCP >= l.opts.CheckpointEvery || e.Type == EvTurnEnd || e.Type == EvHistoryCompaction {
		l.checkpoint(s)
	}
	if e.Type == EvTurnEnd {
		l.compactAfterTurn(s)
	}
}

func (l *Loop) checkpoint(s *session) {
	data := s.st.encodeCheckpoint(nil)
	id, seq := s.st.ID, s.st.LastSeq
	l.ops = append(l.ops, func(tx *storage.Tx) error { return tx.PutCheckpoint(id, seq, data) })
	s.sinceCP = 0
}

// want queues the session for a turn if its state has one to run.
func (l *Loop) want(s *session) {
	if s.st.TurnActive && s.turn == nil && !s.queued {
		s.queued = true
		l.waiting = append(l.waiting, s)
	}
}

// afterCommit runs fn on the loop goroutine once the current batch is
// committed, with the commit's error.
func (l *Loop) afterCommit(fn func(error)) { l.after = append(l.after, fn) }

// flush commits the batch in one transaction (one fsync), then publishes
// its events, runs what waited for it and starts the work it made ready.
// Starting work may record more events (a turn that fails at once), so it
// repeats until nothing is left.
func (l *Loop) flush() {
	for {
		l.commit()
		l.schedule()
		if len(l.ops) == 0 && len(l.after) == 0 {
			return
		}
	}
}

func (l *Loop) commit() {
	if len(l.ops) == 0 && len(l.after) == 0 {
		return
	}
	for s := range l.dirty {
		info := s.st.info()
		meta := info.appendJSON(nil)
		id := s.st.ID
		l.ops = append(l.ops, func(tx *storage.Tx) error { return tx.PutMeta(id, meta) })
	}
	var err error
	if len(l.ops) > 0 {
		err = l.opts.Store.Update(func(tx *storage.Tx) error {
			for _, op := range l.ops {
				if err := op(tx); err != nil {
					return err
				}
			}
			return nil
		})
	}
	pub, after, dirty := l.publish, l.after, l.dirty
	clear(l.ops)
	l.ops, l.publish, l.after = l.ops[:0], nil, nil
	l.dirty = make(map[*session]struct{})
	if err != nil {
		l.log.Error("commit failed", "err", err, "sessions", len(dirty))
		l.halt(err)
		// Memory is ahead of the disk now: forget those sessions; the next
		// use rebuilds them from what was committed.
		for s := range dirty {
			l.failedTurns[s.st.ID] = err // memory says nothing of the disk's turn
			l.drop(s, err)
		}
	} else {
		for _, p := range pub {
			p.s.publish(p.e)
		}
	}
	for _, fn := range after {
		fn(err)
	}
}

// drop forgets a resident session: its turn is cancelled and its
// subscribers are told why and closed.
func (l *Loop) drop(s *session, why error) {
	if l.sessions[s.st.ID] != s {
		return
	}
	delete(l.sessions, s.st.ID)
	if s.turn != nil {
		l.unpin(s.turn)
		s.turn.cancel()
		l.release(s.turn)
		s.turn = nil
	}
	l.takeEarly(s, cmp.Or(why, ErrSessionNotFound))
	failCompaction(s, cmp.Or(why, ErrSessionNotFound))
	for _, sub := range s.subs {
		if why != nil {
			sub.fail(why)
		} else {
			sub.close()
		}
	}
	s.subs = nil
}

// load returns the resident session, or rebuilds it from its latest
// checkpoint and the events after it.
func (l *Loop) load(id string) (*session, error) {
	if s, ok := l.sessions[id]; ok {
		return s, nil
	}
	var st *state
	archived := false // no usable checkpoint, and the log's start left the database
	err := l.opts.Store.View(func(tx *storage.Tx) error {
		cpSeq, cp, err := tx.LatestCheckpoint(id)
		if err != nil {
			return err
		}
		if cp != nil {
			if st, err = decodeCheckpoint(&l.parser, cp); err != nil {
				l.log.Warn("checkpoint unreadable, replaying the whole log", "session", id, "err", err)
				st, cpSeq = nil, 0
			}
		}
		if st == nil {
			st = &state{ID: id}
			if first, err := tx.FirstSeq(id); err != nil || first > 1 {
				archived = err == nil
				return err
			}
		} else if err := st.replayWindow(tx, &l.parser); err != nil {
			return err
		}
		return tx.Events(id, cpSeq, func(seq uint64, data []byte) error {
			e, err := DecodeEvent(&l.parser, data)
			if err != nil {
				return fmt.Errorf("session %s event %d: %w", id, seq, err)
			}
			st.apply(&e)
			return nil
		})
	})
	if errors.Is(err, storage.ErrSessionNotFound) {
		return nil, ErrSessionNotFound
	}
	if err != nil {
		l.halt(err)
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	if archived {
		if st, err = l.loadWhole(id); err != nil {
			return nil, err
		}
	}
	if st.LastSeq == 0 {
		return nil, ErrSessionNotFound
	}
	s := &session{st: st, used: l.now(), pub: st.LastSeq}
	l.sessions[id] = s
	l.heldDue = true
	l.owners.Store(id, st.ref())
	l.learnBudget(s)
	if why, ok := l.failedTurns[id]; ok {
		delete(l.failedTurns, id)
		l.loadFailed(s, why)
	}
	return s, nil
}

// loadWhole rebuilds a session with no usable checkpoint whose older
// events retention moved out of the database: from its archive and the
// stored events. A session whose start was discarded (compaction:
// discard) cannot be rebuilt; it is refused with a sentence, and the loop
// goes on.
func (l *Loop) loadWhole(id string) (*state, error) {
	st := &state{ID: id}
	err := ReadEvents(l.opts.Store, id, 0, func(e Event) error {
		st.apply(&e)
		return nil
	})
	var damaged *ArchiveDamagedError
	if errors.As(err, &damaged) {
		l.log.Warn("session rebuilt from a damaged archive", "session", id, "err", err)
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	if st.Agent == "" {
		return nil, fmt.Errorf("session %s cannot be rebuilt: its checkpoint is unreadable and its first events were discarded by retention; export what is left with agnx-lite session export, then delete it", id)
	}
	return st, nil
}

// loadFailed settles a turn that a failed commit (a full disk) left active
// on disk with nothing running it. Its client was told it failed, so it is
// not answered later out of the blue when the next message arrives: it
// ends as failed, with the reason in the log. A continue agent's turn, or
// one waiting for an approval, resumes as after a crash.
func (l *Loop) loadFailed(s *session, why error) {
	switch {
	case !s.st.TurnActive:
	case resumable(s.st):
		l.want(s)
	default:
		s.lost = &lostTurn{seq: s.st.TurnSeq, content: lastUser(s.st), why: why}
		l.record(s, Event{Type: EvError, Code: "storage_error", Content: why.Error()})
		l.record(s, Event{Type: EvTurnEnd, Reason: TurnFailed})
	}
}

// resumable tells a turn that goes on after the process stopped under it:
// its agent says on_disconnect: continue, or a call still waits for an
// approval, which can be answered after the restart.
func resumable(st *state) bool {
	return st.OnDisconnect == agents.OnDisconnectContinue || len(st.Approvals) > 0
}

// recover finds the sessions that had a turn in flight when the process
// stopped. An agent with on_disconnect: continue resumes the turn; the
// others get turn_end{interrupted} and wait for the next message.
func (l *Loop) recover() error {
	var ids []string
	err := l.opts.Store.View(func(tx *storage.Tx) error {
		return tx.ActiveSessions(func(id string) error {
			ids = append(ids, id)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("find interrupted sessions: %w", err)
	}
	for _, id := range ids {
		s, err := l.load(id)
		if err != nil {
			l.log.Error("cannot recover session", "session", id, "err", err)
			continue
		}
		if resumable(s.st) {
			l.log.Info("resuming interrupted turn", "session", id, "approvals", len(s.st.Approvals))
			l.want(s)
			continue
		}
		l.log.Info("marking interrupted turn", "session", id)
		l.record(s, Event{Type: EvTurnEnd, Reason: TurnInterrupted})
	}
	l.flush()
	return nil
}

// eventSizeHint is about what e's JSON takes: its texts and room for the
// rest, so that encoding it rarely grows the buffer.
func eventSizeHint(e *Event) int {
	n := 256 + len(e.Content) + len(e.Arguments) + len(e.Details)
	for _, c := range e.ToolCalls {
		n += 64 + len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	for _, b := range e.Thinking {
		n += 32 + len(b.Text) + len(b.Signature) + len(b.Redacted)
	}
	return n
}
