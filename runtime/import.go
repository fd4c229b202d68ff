package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/agnx-lite/agnx-lite/agents"

	"github.com/agnx-lite/agnx-lite/storage"
)

// ImportSession stores a session exported elsewhere (agnx-lite's or Agnx's
// events.jsonl, decoded with DecodeEvent) as a new session with a new id.
// Its events keep their order, times and contents and are numbered again
// from 1; the stream must start with session_start and hold no other.
// A turn that was running when the session was exported is closed with
// turn_end interrupted, so the imported session is idle: nothing runs until
// its next message. The session is written in one transaction (events,
// meta and a checkpoint) and is not kept resident. It returns once that is
// committed.
func (l *Loop) ImportSession(ctx context.Context, events []Event) (SessionInfo, error) {
	if err := checkImport(events); err != nil {
		return SessionInfo{}, err
	}
	reply := make(chan result[SessionInfo], 1)
	return call(ctx, l, &importReq{events: events, reply: reply}, reply)
}

// checkImport refuses a stream that is not one whole session's log.
func checkImport(events []Event) error {
	if len(events) == 0 {
		return errors.New("import session: the stream holds no events")
	}
	if events[0].Type != EvSessionStart {
		return fmt.Errorf("import session: the stream starts with %q, not session_start: export the whole session again", events[0].Type)
	}
	if events[0].Agent == "" {
		return errors.New("import session: its session_start names no agent: export the whole session again")
	}
	if !agents.ValidName(events[0].Agent) {
		return fmt.Errorf("import session: its session_start names agent %q, which is not a valid agent name: correct it in the file", events[0].Agent)
	}
	for i := 1; i < len(events); i++ {
		switch e := &events[i]; {
		case e.Type == EvSessionStart:
			return fmt.Errorf("import session: event %d is a second session_start: a stream holds one session", i+1)
		case !e.Durable():
			return fmt.Errorf("import session: event %d is a %q event, which is never stored: export the session again", i+1, e.Type)
		}
	}
	return nil
}

type importReq struct {
	events []Event
	reply  chan result[SessionInfo]
}

// handle folds the events into a new state, exactly as record would, and
// queues one op that writes the whole session. It does not go through
// record: record stamps the current time, publishes to subscribers and
// queues turns, none of which an imported history should do.
func (r *importReq) handle(l *Loop) {
	l.withAgent(r.events[0].Agent, func(a *LoadedAgent, _ error) { r.store(l, historyBudget(a)) })
}

// store folds and stores the session once its agent's history budget is
// known (the default when the agent is not here).
func (r *importReq) store(l *Loop, budget int) {
	id := newSessionID(l.now())
	st := &state{ID: id}
	data := make([][]byte, 0, len(r.events)+2)
	seqs := make(map[uint64]uint64) // the stream's seqs → the new ones
	add := func(e Event) {
		e.Seq = st.LastSeq + 1
		if e.Time.IsZero() {
			e.Time = st.Updated
			if e.Time.IsZero() {
				e.Time = l.now()
			}
		}
		st.apply(&e)
		if e.Type == EvSessionStart {
			e.Principal = st.Principal // stored, not implied again at each read
		}
		data = append(data, e.AppendJSON(nil))
	}
	for _, e := range r.events {
		if e.Seq > 0 {
			seqs[e.Seq] = st.LastSeq + 1
		}
		if c := e.Compaction; c != nil {
			e.Compaction = renumber(c, seqs)
		}
		add(e)
	}
	// A turn_end folds pending messages into the next turn, so a second one
	// may be needed; two always suffice.
	for i := 0; i < 2 && st.TurnActive; i++ {
		add(Event{Type: EvTurnEnd, Reason: TurnInterrupted, Time: st.Updated})
	}
	// A window over the budget is trimmed as the loop would have, so its
	// first load replays no more than the budget.
	if e, ok := st.trimEvent(budget); ok {
		e.Time = st.Updated
		add(e)
	}
	info := st.info()
	meta := info.appendJSON(nil)
	cp := st.encodeCheckpoint(nil)
	l.owners.Store(id, info.Ref())
	last := st.LastSeq
	l.ops = append(l.ops, func(tx *storage.Tx) error {
		if err := tx.CreateSession(id, meta); err != nil {
			return err
		}
		for i, d := range data {
			if err := tx.AppendEvent(id, uint64(i+1), d); err != nil {
				return err
			}
		}
		return tx.PutCheckpoint(id, last, cp)
	})
	l.afterCommit(func(err error) {
		if err != nil {
			err = fmt.Errorf("import session: %w", err)
		}
		r.reply <- result[SessionInfo]{v: info, err: err}
	})
}

// renumber maps an imported compaction's seqs to the new numbering; a seq
// the stream does not hold becomes 0, and apply ignores the compaction.
func renumber(c *Compaction, seqs map[uint64]uint64) *Compaction {
	n := *c
	n.Upto, n.CoversFrom, n.CoversTo = seqs[c.Upto], seqs[c.CoversFrom], seqs[c.CoversTo]
	return &n
}
