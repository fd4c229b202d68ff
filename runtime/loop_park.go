package runtime

// A parked turn waits on something outside the loop — today a person's
// decision on a tool call; the same state serves any later wait (a
// schedule, a subagent) — and holds no turn slot meanwhile, so that turns
// of other sessions run. Its session stays resident, its state says what
// it waits for, and a restart resumes it like any turn. When what it
// waited for lets it go on, it asks for a slot again: parked turns get
// free slots before turns not yet started, in the order they asked.

// parking is the loop's parked turns: how many there are and the ones
// ready to go on, in order.
type parking struct {
	parked int
	ready  []*session
}

// park gives the turn's slot back while it waits.
func (l *Loop) park(s *session) {
	t := s.turn
	if t == nil || t.parked {
		return
	}
	t.parked = true
	l.running--
	l.parking.parked++
}

// parkIfWaiting parks the turn when all it still waits on is people and
// subagents: every call of its round without a result waits for a
// decision or is an agent-tool wait. (A call that asks a person from
// inside, with Ask, parks the turn itself.)
func (l *Loop) parkIfWaiting(s *session) {
	t := s.turn
	if t == nil || t.calls == 0 {
		return
	}
	blocked := len(t.waiting)
	for _, a := range s.st.Approvals {
		if _, asked := t.asks[a.CallID]; !asked {
			blocked++
		}
	}
	if t.calls == blocked {
		l.park(s)
	}
}

// resume runs fn once the turn holds a slot: now when it is not parked,
// else when schedule gives it one.
func (l *Loop) resume(s *session, fn func()) {
	t := s.turn
	if !t.parked {
		fn()
		return
	}
	t.next = append(t.next, fn)
	if len(t.next) == 1 {
		l.parking.ready = append(l.parking.ready, s)
	}
}

// unpark gives free slots to parked turns ready to go on, in order.
// Nothing restarts while the loop drains: what a turn goes on with is
// durable, and the next start resumes it.
func (l *Loop) unpark() {
	for !l.draining && l.running < l.opts.MaxTurns && len(l.parking.ready) > 0 {
		s := l.parking.ready[0]
		l.parking.ready[0] = nil
		l.parking.ready = l.parking.ready[1:]
		t := s.turn
		if t == nil || !t.parked || len(t.next) == 0 || l.sessions[s.st.ID] != s {
			continue // it ended meanwhile
		}
		t.parked = false
		l.parking.parked--
		l.running++
		next := t.next
		t.next = nil
		for _, fn := range next {
			if s.turn != t {
				break // what ran ended the turn
			}
			fn()
		}
	}
}

// release frees what a turn that ends holds: its slot, or its place among
// the parked turns.
func (l *Loop) release(t *turn) {
	if !t.parked {
		l.running--
		return
	}
	l.parking.parked--
	if len(t.next) > 0 {
		for i, s := range l.parking.ready {
			if s.turn == t {
				l.parking.ready = append(l.parking.ready[:i], l.parking.ready[i+1:]...)
				break
			}
		}
	}
}
