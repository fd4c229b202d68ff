package runtime

import (
	"slices"
	"unsafe"
)

// Sessions between turns hold their windows in memory, so a chat's next
// message goes straight to the model. Held is bounded: once the resident
// sessions' windows add up to more than Options.HeldBytes, the least
// recently used idle ones leave memory at the end of a turn (or a load)
// and come back from their checkpoint and the log on their next message,
// a fraction of a millisecond for a long window. A daemon with a few chats
// keeps them all; one with many busy chats stays flat instead of growing
// with every message until its sessions go idle.
//
// The check runs on the loop after a turn ends or a session is loaded: a
// pass over the resident sessions, which the bound itself keeps few.

// sessionOverhead is what a resident session costs besides its window:
// its structs, maps and slices of a few entries.
const sessionOverhead = 2 << 10

var messageSize = int64(unsafe.Sizeof(Message{}))

// heldSize estimates the bytes a resident session holds: the window's
// messages (their text, about four bytes a token, and the slots of the
// slices) and the summary.
func (s *session) heldSize() int64 {
	st := s.st
	return sessionOverhead + int64(st.HistTokens)*4 + int64(cap(st.History)+cap(st.Pending))*messageSize
}

// fitHeld drops the least recently used droppable sessions while the
// resident ones hold more than HeldBytes. It reports how many it dropped.
func (l *Loop) fitHeld() int {
	l.heldDue = false
	max := l.opts.HeldBytes
	if max < 0 {
		return 0
	}
	var total int64
	idle := l.heldScratch[:0]
	for _, s := range l.sessions {
		total += s.heldSize()
		if l.droppable(s) {
			idle = append(idle, s)
		}
	}
	n := 0
	if total > max {
		slices.SortFunc(idle, func(a, b *session) int { return a.used.Compare(b.used) })
		for _, s := range idle {
			if total <= max {
				break
			}
			total -= s.heldSize()
			delete(l.sessions, s.st.ID)
			n++
		}
	}
	clear(idle) // no pointers kept to the sessions dropped
	l.heldScratch = idle[:0]
	return n
}
