package runtime

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// A wait is an open agent-tool call that returns when the children it
// names have settled: their turn ended, or they wait for a person's
// decision. It is in memory only; its tool_call is durable, and a turn
// resumed after a restart runs it again (it only reads), so a wait
// survives a restart. While a turn waits on nothing but people and
// children, it holds no turn slot (loop_park.go).
type waiter struct {
	j     toolJob
	ids   []string
	first bool
	timer *time.Timer
	done  bool
}

// wait answers at once when the children have settled, else registers
// the wait and parks the turn.
func (l *Loop) wait(j toolJob, a agentArgs) {
	s := j.s
	ids := a.IDs
	if len(ids) == 0 {
		// The children of this turn, and the others still working.
		for _, ch := range s.st.Children {
			if c, err := l.load(ch.ID); s.st.spawnedThisTurn(ch) || err == nil && !c.settled() {
				ids = append(ids, ch.ID)
			}
		}
		if len(ids) == 0 && len(s.st.Children) > 0 {
			l.agentDone(j, l.childrenStatus(s, ""))
			return
		}
	}
	if len(ids) == 0 {
		l.agentDone(j, ErrorResult("error: agent: this session has no subagents to wait for: spawn one first"))
		return
	}
	for _, id := range ids {
		if _, err := l.child(s, id); err != nil {
			l.agentDone(j, ErrorResult("error: agent: "+err.Error()))
			return
		}
	}
	w := &waiter{j: j, ids: ids, first: a.Mode == "first"}
	if res, ok := l.waitResult(w, false); ok {
		l.agentDone(j, res)
		return
	}
	if l.waits == nil {
		l.waits = make(map[string][]*waiter)
	}
	for _, id := range ids {
		l.waits[id] = append(l.waits[id], w)
	}
	j.t.waiting = append(j.t.waiting, w)
	sid, turnID := s.st.ID, j.t.id
	w.timer = time.AfterFunc(a.Timeout, func() {
		_ = l.post(context.Background(), &waitTimeout{sid: sid, turn: turnID, w: w})
	})
	l.parkIfWaiting(s)
}

type waitTimeout struct {
	sid  string
	turn uint64
	w    *waiter
}

func (r *waitTimeout) handle(l *Loop) {
	if r.w.done {
		return
	}
	res, _ := l.waitResult(r.w, true)
	l.finishWait(r.w, res)
}

// settled reports whether a child has nothing running that a parent
// could wait for: no turn, or a turn that waits for a person.
func (s *session) settled() bool {
	return s.st.Ended || !s.st.TurnActive || len(s.st.Approvals) > 0
}

// waitResult is the wait's result when it is over (or timedOut): every
// child settled, or the first one with first.
func (l *Loop) waitResult(w *waiter, timedOut bool) (Result, bool) {
	var done, running, doneIDs []string
	for _, id := range w.ids {
		c, err := l.load(id)
		switch {
		case err != nil:
			done = append(done, fmt.Sprintf("## subagent %s: gone (%v)", id, err))
		case c.settled():
			done = append(done, childReport(c, maxChildAnswer))
			doneIDs = append(doneIDs, id)
		default:
			running = append(running, id)
		}
	}
	over := len(running) == 0 || w.first && len(done) > 0
	if !over && !timedOut {
		return Result{}, false
	}
	t := w.j.t
	if t.delivered == nil {
		t.delivered = make(map[string]bool)
	}
	for _, id := range doneIDs {
		t.delivered[id] = true
	}
	var b strings.Builder
	if !over {
		fmt.Fprintf(&b, "The wait timed out. ")
	}
	if len(running) > 0 {
		fmt.Fprintf(&b, "Still working: %s (wait again, or check with status).\n\n", strings.Join(running, ", "))
	}
	b.WriteString(strings.Join(done, "\n\n"))
	return Result{Content: strings.TrimSpace(b.String())}, true
}

// childReport tells a parent how a child stands, with its answer cut to
// max bytes.
func childReport(c *session, max int) string {
	st := c.st
	head := fmt.Sprintf("## subagent %s (agent %s): ", st.ID, st.Agent)
	switch {
	case len(st.Approvals) > 0:
		a := st.Approvals[0]
		return head + fmt.Sprintf("waiting for a person to allow %s %q: it can be answered in session %s "+
			"(the web page, or agnx-lite attach %s)", a.Tool, a.Subject, st.ID, st.ID)
	case st.TurnActive:
		return head + "working"
	}
	status := st.LastEnd
	switch {
	case st.Ended && status == "":
		status = "closed"
	case status == "":
		status = "not started"
	}
	if st.Ended {
		status += ", closed"
	}
	out := head + status
	if st.LastEnd == TurnFailed && st.LastError != "" {
		out += "\nerror: " + st.LastError
	}
	if ans := st.lastAnswer(); ans != "" {
		out += "\n" + cutRunes(ans, max)
	}
	return out
}

// finishWait records a wait's result and forgets the wait.
func (l *Loop) finishWait(w *waiter, res Result) {
	l.dropWait(w)
	l.agentDone(w.j, res)
}

func (l *Loop) dropWait(w *waiter) {
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
	for _, id := range w.ids {
		ws := l.waits[id]
		for i, x := range ws {
			if x == w {
				ws = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(ws) == 0 {
			delete(l.waits, id)
		} else {
			l.waits[id] = ws
		}
	}
	t := w.j.t
	for i, x := range t.waiting {
		if x == w {
			t.waiting = append(t.waiting[:i], t.waiting[i+1:]...)
			break
		}
	}
}

// dropWaits forgets the waits of a turn that ended.
func (l *Loop) dropWaits(t *turn) {
	for len(t.waiting) > 0 {
		l.dropWait(t.waiting[0])
	}
}

// subagentChanged is told that child c settled (its turn ended, it waits
// for a person, it was closed or deleted). Waits on it that are over get
// their result; when nothing waits on it and its parent has no open wait
// that covers it, the parent is sent a report, which starts a turn: a
// child always reports back.
func (l *Loop) subagentChanged(c *session) {
	sp := c.st.Spawn
	if sp == nil || !c.settled() {
		return
	}
	covered := false
	for _, w := range append([]*waiter(nil), l.waits[c.st.ID]...) {
		if w.done || w.j.s.turn != w.j.t {
			l.dropWait(w)
			continue
		}
		covered = true
		if res, ok := l.waitResult(w, false); ok {
			l.finishWait(w, res)
		}
	}
	if covered || c.closing {
		return // a wait has it, or the parent closes it
	}
	p, err := l.load(sp.Parent)
	if err != nil || p.st.Ended {
		return
	}
	for _, ch := range p.st.Children {
		if ch.ID == c.st.ID && p.st.spawnedThisTurn(ch) {
			return // the turn that spawned it waits for it, or reports it as it ends
		}
	}
	for _, oc := range p.st.OpenCalls {
		if isAgentWait(&l.parser, oc, c.st.ID) {
			return // a resumed turn's wait will read it
		}
	}
	l.report(p, c)
}

// report sends parent p a settled child's report: a message that starts a
// turn, so that the parent acts on it.
func (l *Loop) report(p, c *session) {
	l.record(p, Event{Type: EvUserMessage, Origin: OriginSubagent,
		Content: "[agnx-lite] A subagent reports back.\n\n" + childReport(c, maxChildAnswer)})
}

// unreported are the settled children the ending turn of s spawned and
// no wait of it returned: reported once the turn has ended.
func (l *Loop) unreported(s *session) []*session {
	var out []*session
	for _, ch := range s.st.Children {
		if !s.st.spawnedThisTurn(ch) || s.turn != nil && s.turn.delivered[ch.ID] {
			continue
		}
		if c, err := l.load(ch.ID); err == nil && c.settled() && !c.closing {
			out = append(out, c)
		}
	}
	return out
}

// subagentBlocked is told that s now waits for a person's decision.
func (l *Loop) subagentBlocked(s *session) {
	if s.st.Spawn != nil {
		l.subagentChanged(s)
	}
}

// childrenStatus lists s's children (one, with id) and how they stand.
func (l *Loop) childrenStatus(s *session, id string) Result {
	if id != "" {
		c, err := l.child(s, id)
		if err != nil {
			return ErrorResult("error: agent: " + err.Error())
		}
		return Result{Content: childReport(c, maxChildAnswer)}
	}
	if len(s.st.Children) == 0 {
		return Result{Content: "This session has no subagents."}
	}
	parts := make([]string, 0, len(s.st.Children))
	for _, ch := range s.st.Children {
		id := ch.ID
		c, err := l.load(id)
		if err != nil {
			parts = append(parts, fmt.Sprintf("## subagent %s: gone (%v)", id, err))
			continue
		}
		parts = append(parts, childReport(c, 500))
	}
	return Result{Content: strings.Join(parts, "\n\n")}
}
