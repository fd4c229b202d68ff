package runtime

import (
	"context"
	"slices"
	"unsafe"
)

// Fit keeps the sessions in memory within about max bytes: when their
// windows (the messages each sends its model, held between turns) add up
// to more, it drops the least recently used idle ones, which come back
// from their checkpoints and the log on their next message (a fraction of
// a millisecond for a long window). Without it a daemon with many active
// chats grows with every message until its sessions go idle. It reports
// the sessions dropped and the bytes still resident. The memory guard
// calls it at every check.
func (l *Loop) Fit(ctx context.Context, max int64) (dropped int, resident int64, err error) {
	reply := make(chan result[[2]int64], 1)
	v, err := call(ctx, l, &fitReq{max: max, reply: reply}, reply)
	return int(v[0]), v[1], err
}

type fitReq struct {
	max   int64
	reply chan result[[2]int64]
}

func (r *fitReq) handle(l *Loop) {
	var total int64
	var idle []*session
	for _, s := range l.sessions {
		total += s.memSize()
		if l.droppable(s) {
			idle = append(idle, s)
		}
	}
	n := 0
	if total > r.max {
		slices.SortFunc(idle, func(a, b *session) int { return a.used.Compare(b.used) })
		for _, s := range idle {
			if total <= r.max {
				break
			}
			total -= s.memSize()
			delete(l.sessions, s.st.ID)
			n++
		}
	}
	r.reply <- result[[2]int64]{v: [2]int64{int64(n), total}}
}

// droppable reports whether a session holds nothing but what its
// checkpoint and log give back: no turn, queue, compaction, subscriber or
// uncommitted change.
func (l *Loop) droppable(s *session) bool {
	_, dirty := l.dirty[s]
	return s.turn == nil && !s.st.TurnActive && !s.queued && s.compacting == nil && len(s.subs) == 0 && !dirty
}

// sessionOverhead is what a resident session costs besides its window:
// its structs, maps and slices of a few entries.
const sessionOverhead = 2 << 10

// memSize estimates the bytes a resident session holds: the window's
// messages (their text, about four bytes a token, and the slots of the
// slice) and the summary.
func (s *session) memSize() int64 {
	st := s.st
	return sessionOverhead + int64(st.HistTokens)*4 + int64(cap(st.History))*int64(unsafe.Sizeof(Message{})) +
		int64(cap(st.Pending))*int64(unsafe.Sizeof(Message{}))
}
