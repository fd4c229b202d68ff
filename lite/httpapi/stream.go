package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// turnFollower picks, from a session's live events, those of the turn a
// message started: everything after the message, until as many turn_ends
// as it takes (two when the message was queued behind a running turn).
type turnFollower struct {
	after uint64
	need  int
	ended int
}

func newTurnFollower(sent runtime.Sent) *turnFollower {
	f := &turnFollower{after: sent.Seq, need: 1}
	if sent.Queued {
		f.need = 2
	}
	return f
}

// accept reports whether e belongs to the stream and whether it ends it.
func (f *turnFollower) accept(e *runtime.Event) (keep, done bool) {
	if e.Durable() && e.Seq <= f.after {
		return false, false
	}
	if e.Type == runtime.EvTurnEnd {
		f.ended++
		return true, f.ended >= f.need
	}
	return true, false
}

// ours reports whether the events now coming are of the message's own
// turn, not of the turn it was queued behind.
func (f *turnFollower) ours() bool { return f.ended >= f.need-1 }

type messageBody struct {
	Content    string `json:"content"`
	SenderID   string `json:"sender_id"`
	SenderName string `json:"sender_name"`
}

// send decodes a message body, subscribes to the session with a queue of
// queue events (0: the loop's default) and sends the message. On error it
// has answered the request.
func (s *Server) send(w http.ResponseWriter, r *http.Request, queue int) (*runtime.Subscription, runtime.Sent, bool) {
	var body messageBody
	if status, err := decode(r, &body); err != nil {
		writeProblem(w, r, status, problemCode(status), err.Error())
		return nil, runtime.Sent{}, false
	}
	if body.Content == "" {
		writeProblem(w, r, http.StatusUnprocessableEntity, codeInvalid, `field "content" is required and must not be empty`)
		return nil, runtime.Sent{}, false
	}
	id := r.PathValue("id")
	sub, err := s.o.Loop.FollowQueue(r.Context(), id, runtime.Live, queue)
	if err != nil {
		sessionError(w, r, err)
		return nil, runtime.Sent{}, false
	}
	sent, err := s.o.Loop.Send(r.Context(), id, runtime.Input{Content: body.Content, SenderID: body.SenderID, SenderName: body.SenderName})
	if err != nil {
		sub.Close()
		sessionError(w, r, err)
		return nil, runtime.Sent{}, false
	}
	return sub, sent, true
}

// clientGone runs when a client leaves before its turn ended: the agent's
// on_disconnect decides whether the turn goes on.
func (s *Server) clientGone(sub *runtime.Subscription, id string) {
	sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if paused, err := s.o.Loop.Disconnect(ctx, id); err == nil && paused {
		s.log.Info("client left mid-turn; pausing the turn", "session", id)
	}
}

// stream sends a message and streams its turn as SSE (see sse_view.go
// for what the client sees).
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	view, bad := viewOf(r)
	if bad != "" {
		writeProblem(w, r, http.StatusBadRequest, codeInvalid, bad)
		return
	}
	if !streamSlot(w, r) {
		return
	}
	sub, sent, ok := s.send(w, r, 0)
	if !ok {
		return
	}
	sse := newSSE(w)
	if err := sse.send(sent.Seq, "start", []byte("{}")); err != nil {
		s.clientGone(sub, r.PathValue("id"))
		return
	}
	f := newTurnFollower(sent)
	tv := &turnView{view: view, sid: r.PathValue("id"), endOnApproval: true}
	s.pump(r, sse, sub, tv, func(e *runtime.Event) (bool, bool) {
		ours := f.ours() // before accept counts a turn_end
		keep, done := f.accept(e)
		if !view.lite && !ours {
			keep = false // Agnx's view shows one turn: the message's
		}
		return keep, done
	})
}

// events streams a session's events (Loop.Follow): with Last-Event-ID (or
// ?after=N) first what the log holds after that seq, then live events,
// with no gap and no duplicate. ?until=turn_end ends the stream after the next
// turn_end; without it the stream stays open. It shows Agnx's events
// unless the client asks for lite's (see sse_view.go).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	after, err := resumePoint(r)
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, codeInvalid, err.Error())
		return
	}
	view, bad := viewOf(r)
	if bad != "" {
		writeProblem(w, r, http.StatusBadRequest, codeInvalid, bad)
		return
	}
	untilEnd := r.URL.Query().Get("until") == "turn_end"
	if !streamSlot(w, r) {
		return
	}
	sub, err := s.o.Loop.Follow(r.Context(), id, after)
	if err != nil {
		sessionError(w, r, err)
		return
	}
	tv := &turnView{view: view, sid: id}
	s.pump(r, newSSE(w), sub, tv, func(e *runtime.Event) (bool, bool) {
		return true, untilEnd && e.Type == runtime.EvTurnEnd
	})
}

// resumePoint is the seq a stream resumes after: the later of
// Last-Event-ID and ?after=. A browser's EventSource opened with ?after=
// sends Last-Event-ID on its own when it reconnects, which is then the
// later one; the URL's would replay what it already has.
func resumePoint(r *http.Request) (uint64, error) {
	var at uint64
	for _, v := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("after")} {
		if v == "" {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, errBadResume
		}
		at = max(at, n)
	}
	return at, nil
}

var errBadResume = &resumeError{}

type resumeError struct{}

func (*resumeError) Error() string {
	return "Last-Event-ID (or ?after=) must be the seq of an event: a whole number"
}

// pump copies accepted events to the client, as tv shows them, until one
// ends the stream, the client leaves, the subscription is dropped or the
// server closes. It sends keep-alive comments while the session is quiet.
func (s *Server) pump(r *http.Request, sse *sseWriter, sub *runtime.Subscription, tv *turnView, accept func(*runtime.Event) (keep, done bool)) {
	id := r.PathValue("id")
	var tick <-chan time.Time
	if s.o.KeepAlive > 0 {
		t := time.NewTicker(s.o.KeepAlive)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-r.Context().Done():
			s.clientGone(sub, id)
			return
		case <-s.closing:
			sub.Close()
			if !tv.view.lite {
				_ = sse.send(0, "error", errorData(codeUnavailable, "the daemon is shutting down: send the message again once it is back"))
			}
			return
		case <-tick:
			if sse.keepAlive() != nil {
				s.clientGone(sub, id)
				return
			}
		case e, ok := <-sub.C():
			if !ok {
				s.dropped(sse, sub, tv, id)
				return
			}
			keep, done := accept(&e)
			end := false
			if keep {
				var err error
				if end, err = tv.write(sse, &e); err != nil {
					s.clientGone(sub, id)
					return
				}
			}
			if done || end {
				// The server ends the stream, here after approval_required
				// too: that is no disconnect, the turn waits for POST
				// .../approve.
				sub.Close()
				return
			}
		}
	}
}

// dropped tells the client why its subscription ended before the stream
// did. A lite client resumes with Last-Event-ID when the loop stopped; a
// deleted session has nothing to resume and a failed commit (the disk is
// full) is said. Agnx's client cannot resume: it gets an error event.
func (s *Server) dropped(sse *sseWriter, sub *runtime.Subscription, tv *turnView, id string) {
	code, msg := "", ""
	switch {
	case sub.Deleted():
		code, msg = codeSessionNotFound, deletedMidTurn(id)
	case sub.Err() != nil:
		code, msg = codeInsufficientStorage, sub.Err().Error()
	case !tv.view.lite:
		code, msg = codeUnavailable, "the runtime stopped before the turn ended: read the session's messages to see how far it got"
	default:
		return
	}
	_ = sse.send(0, "error", errorData(code, msg))
}
