package runtime

import "context"

// Subscription receives a session's events as they happen: durable events
// after they are committed, and tokens as they stream. Tokens are lossy (a
// full queue drops them, counted in Dropped); a subscriber too slow for a
// durable event is closed with Lagged set, and can read what it missed
// from the log.
type Subscription struct {
	c   chan Event
	l   *Loop
	sid string
	// Lagged and Dropped are written by the loop before C is closed and
	// may be read after.
	lagged  bool
	deleted bool
	err     error
	dropped int
	closed  bool
}

// C delivers the events; it is closed when the subscription ends.
func (s *Subscription) C() <-chan Event { return s.c }

// Lagged reports, after C is closed, whether the subscriber was dropped for
// not keeping up.
func (s *Subscription) Lagged() bool { return s.lagged }

// Deleted reports, after C is closed, whether it was closed because the
// session was deleted: a client waiting for a turn says so instead of
// blaming the runtime.
func (s *Subscription) Deleted() bool { return s.deleted }

// Err reports, after C is closed, the error that made the runtime close
// it (a commit that failed: the disk is full), or nil: a client waiting
// for a turn gives that sentence instead of blaming the runtime.
func (s *Subscription) Err() error { return s.err }

// Close ends the subscription. It may be called more than once.
func (s *Subscription) Close() {
	_ = s.l.post(context.Background(), &unsubscribeReq{sub: s})
}

func (s *Subscription) send(e Event) bool {
	if s.closed {
		return false
	}
	if !e.Durable() && len(s.c) >= cap(s.c)/2 {
		// Tokens may use only half the queue: the rest stays free for the
		// durable events, so a reader that is merely slower than a burst of
		// tokens is not dropped.
		s.dropped++
		return true
	}
	select {
	case s.c <- e:
		return true
	default:
		if e.Durable() {
			s.lagged = true
			s.close()
			return false
		}
		s.dropped++
		return true
	}
}

func (s *Subscription) close() {
	if !s.closed {
		s.closed = true
		close(s.c)
	}
}

// publish fans an event out without blocking; subscribers closed for
// lagging are removed.
func (s *session) publish(e Event) {
	kept := s.subs[:0]
	for _, sub := range s.subs {
		if sub.send(e) {
			kept = append(kept, sub)
		}
	}
	clear(s.subs[len(kept):])
	s.subs = kept
}

type unsubscribeReq struct{ sub *Subscription }

func (r *unsubscribeReq) handle(l *Loop) {
	sub := r.sub
	if s := l.sessions[sub.sid]; s != nil {
		for i, x := range s.subs {
			if x == sub {
				s.subs = append(s.subs[:i], s.subs[i+1:]...)
				break
			}
		}
	}
	sub.close()
}
