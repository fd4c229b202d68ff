package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Live, given to Follow as the seq to start after, follows a session from
// its next event on.
const Live = ^uint64(0)

// Subscription follows one session (see Loop.Follow): the durable events
// the log holds after the starting seq, then the live ones as they are
// committed, each exactly once and in order, and tokens as they stream.
// Tokens are lossy (a full queue drops them); a
// subscriber too slow for a durable event is never dropped: it reads what
// it missed from the log, at its own pace, and goes live again.
//
// While it catches up from the log a worker of the loop's sends on C;
// otherwise the loop does, without ever blocking. mu decides which.
type Subscription struct {
	c    chan Event
	l    *Loop
	sid  string
	stop chan struct{} // closed when the subscription closes while catching up

	mu sync.Mutex
	// Guarded by mu.
	closed     bool
	catchingUp bool
	pos        uint64 // the last durable seq sent on c
	skipped    uint64 // the last seq the loop left to the catch-up
	deleted    bool
	err        error
}

// C delivers the events; it is closed when the subscription ends: Close,
// the session deleted, a failed commit, or the loop stopped.
func (s *Subscription) C() <-chan Event { return s.c }

// Deleted reports, after C is closed, whether it was closed because the
// session was deleted: a client waiting for a turn says so instead of
// blaming the runtime.
func (s *Subscription) Deleted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deleted
}

// Err reports, after C is closed, the error that made the runtime close
// it (a commit that failed: the disk is full; a log that cannot be read),
// or nil: a client waiting for a turn gives that sentence instead of
// blaming the runtime.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the subscription. It may be called more than once.
func (s *Subscription) Close() {
	if s.l.post(context.Background(), &unsubscribeReq{sub: s}) != nil {
		s.close() // the loop stopped: it closed every subscription it had
	}
}

// send offers an event from the loop goroutine without blocking; it
// reports false once the subscription is closed.
func (s *Subscription) send(e Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	durable := e.Durable() && e.Seq != 0
	switch {
	case s.catchingUp:
		// The worker reads it from the log; a token of that stretch is
		// lost (the round's message has the whole text).
		if durable {
			s.skipped = e.Seq
		}
		return true
	case durable && e.Seq <= s.pos:
		return true // the catch-up sent it already
	case !e.Durable() && len(s.c) >= cap(s.c)/2:
		// Tokens may use only half the queue: the rest stays free for the
		// durable events, so a reader that is merely slower than a burst
		// of tokens does not have to catch up.
		return true
	}
	select {
	case s.c <- e:
		if durable {
			s.pos = e.Seq
		}
	default:
		if durable {
			s.skipped = e.Seq
			s.startCatchUp()
		}
	}
	return true
}

// startCatchUp hands the sends to a worker that reads the log after pos.
// It holds mu, on the loop goroutine (wg.Add is safe there while Run runs).
func (s *Subscription) startCatchUp() {
	s.catchingUp = true
	s.l.wg.Add(1)
	go s.catchUp()
}

// catchUp sends the log's events after pos, a page at a time so no read
// transaction stays open while the reader is slow, until the log has
// nothing the loop left to it; then the loop sends again.
func (s *Subscription) catchUp() {
	defer s.l.wg.Done()
	var page []Event
	for {
		s.mu.Lock()
		if s.closed {
			close(s.c)
			s.mu.Unlock()
			return
		}
		pos, want := s.pos, s.skipped
		s.mu.Unlock()
		var err error
		page, err = s.l.readPage(s.sid, pos, page[:0])
		if err != nil {
			s.finish(err)
			return
		}
		if len(page) == 0 {
			s.mu.Lock()
			switch {
			case s.closed:
				// Closed while the page was read: close left c to this
				// worker, so it must not hand the sends back to the loop.
				close(s.c)
				s.mu.Unlock()
				return
			case s.skipped <= s.pos:
				s.catchingUp = false // the loop sends from here on
				s.mu.Unlock()
				return
			case want > pos:
				// Committed before this read began, yet not in the log.
				s.mu.Unlock()
				s.finish(fmt.Errorf("session %s: the log ends at event %d, before event %d", s.sid, pos, want))
				return
			}
			s.mu.Unlock()
			continue // committed after the page was read
		}
		for i := range page {
			select {
			case s.c <- page[i]:
				s.mu.Lock()
				s.pos = page[i].Seq
				s.mu.Unlock()
			case <-s.stop:
				s.finish(nil)
				return
			case <-s.l.done:
				s.finish(ErrClosed)
				return
			}
		}
	}
}

// finish closes the subscription from the catch-up worker, which owns c.
func (s *Subscription) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == ErrSessionNotFound {
		s.deleted = true
	} else if err != nil && s.err == nil && !s.closed {
		s.err = err
	}
	s.closed = true
	close(s.c)
}

// close ends the subscription; a catch-up worker closes c itself.
func (s *Subscription) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.catchingUp {
		close(s.stop)
		return
	}
	close(s.c)
}

// fail closes the subscription telling the reader why.
func (s *Subscription) fail(why error) {
	s.mu.Lock()
	s.err = why
	s.mu.Unlock()
	s.send(Event{Type: EvError, Code: "storage_error", Content: why.Error()})
	s.close()
}

func (s *Subscription) markDeleted() {
	s.mu.Lock()
	s.deleted = true
	s.mu.Unlock()
}

// pageSize bounds the events a catch-up reads in one transaction.
const pageSize = 64

// readPage appends up to pageSize events of the session after seq to page.
func (l *Loop) readPage(sid string, after uint64, page []Event) ([]Event, error) {
	err := l.Events(context.Background(), sid, after, func(e Event) error {
		page = append(page, e)
		if len(page) == pageSize {
			return errPageFull
		}
		return nil
	})
	if err == errPageFull {
		err = nil
	}
	return page, err
}

var errPageFull = errors.New("page full")

// Follow returns a subscription to a session's events after seq after:
// first the durable events the log holds, then the live ones, with no gap
// and no duplicate. Live follows from the next event on. Tokens come as
// they stream once the subscription is live; they are ephemeral extras,
// never replayed.
func (l *Loop) Follow(ctx context.Context, sessionID string, after uint64) (*Subscription, error) {
	return l.FollowQueue(ctx, sessionID, after, 0)
}

// FollowQueue is Follow with a queue of n events (0: Options.SubscriberBuffer).
// A reader that only waits for a turn's outcome needs few: tokens may fill
// half of it and are dropped beyond that, and a durable event that finds
// it full is read from the log instead. Each queued event takes some 400
// bytes, so a queue of 64 made a third of a turn's allocations.
func (l *Loop) FollowQueue(ctx context.Context, sessionID string, after uint64, n int) (*Subscription, error) {
	reply := make(chan result[*Subscription], 1)
	return call(ctx, l, &followReq{sid: sessionID, after: after, queue: n, reply: reply}, reply)
}

// Subscribe follows a session from its next event on: Follow(Live).
func (l *Loop) Subscribe(ctx context.Context, sessionID string) (*Subscription, error) {
	return l.Follow(ctx, sessionID, Live)
}

type followReq struct {
	sid   string
	after uint64
	queue int
	reply chan result[*Subscription]
}

func (r *followReq) handle(l *Loop) {
	s, err := l.load(r.sid)
	if err != nil {
		r.reply <- result[*Subscription]{err: err}
		return
	}
	n := r.queue
	if n <= 0 {
		n = l.opts.SubscriberBuffer
	}
	sub := &Subscription{c: make(chan Event, n), l: l, sid: r.sid, stop: make(chan struct{}),
		pos: min(r.after, s.pub)}
	if sub.pos < s.pub {
		sub.skipped = s.pub
		sub.startCatchUp()
	}
	s.subs = append(s.subs, sub)
	s.used = l.now()
	r.reply <- result[*Subscription]{v: sub}
}

// publish fans an event out without blocking; closed subscribers are
// removed.
func (s *session) publish(e Event) {
	if e.Durable() && e.Seq > s.pub {
		s.pub = e.Seq
	}
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
