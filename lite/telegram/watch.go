package telegram

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// watcher follows one session from its outbox record on (Loop.Follow: the
// log after the last delivered seq, then live): it shows "typing…",
// streams the answer into one message, delivers answers, approval
// requests and errors, and ends once it has delivered everything and no
// turn runs. Its fields are its goroutine's own, but for holds (the
// outbox goroutine's), sid and chat (set before it starts, then only
// read) and the channels.
type watcher struct {
	o    *outbox
	bot  *bot
	sid  string
	chat int64
	rec  outRecord
	// dirty: rec moved on since it was last written. Only the mark before
	// a send must be durable at once; the rest rides on the next mark, or
	// is written when the watcher ends.
	dirty bool
	pos   uint64 // the last durable seq handled
	// until is when to ask the outbox again whether to end: the session's
	// last seq when it last looked, or never (a turn runs: its turn_end
	// asks).
	until uint64
	ready chan struct{} // closed once it follows the session (or failed to)
	poked chan struct{} // ask again whether to end: a hold was released
	holds int           // messages being sent to the session; the outbox goroutine's

	text     strings.Builder // this round's streamed text
	lastEdit time.Time
	edit     *time.Timer // pending preview edit, nil when none
	noPrev   bool        // the preview failed to send this round
	asks     int         // approvals waiting
}

// run follows the session until the outbox lets the watcher end, the
// session is gone, or ctx ends.
func (w *watcher) run(ctx context.Context) {
	defer w.leave()
	sub, err := w.follow(ctx)
	close(w.ready)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, runtime.ErrSessionNotFound) {
			w.bot.log.Error("telegram: cannot follow a session to deliver its replies", "session", w.sid, "err", err)
		}
		return
	}
	defer sub.Close()
	if w.pos >= w.until && w.ended() {
		return
	}
	w.serve(ctx, sub)
}

// feed is what a watcher reads: a *runtime.Subscription.
type feed interface {
	C() <-chan runtime.Event
	Err() error
	Deleted() bool
}

// serve handles the session's events, the typing and preview timers, and
// the outbox's pokes until the outbox lets the watcher end, the feed
// closes, or ctx ends.
func (w *watcher) serve(ctx context.Context, sub feed) {
	typing := time.NewTicker(w.o.o.TypingInterval)
	defer typing.Stop()
	defer w.stopEdit()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-sub.C():
			if !ok {
				if sub.Deleted() {
					w.dirty = false // no record for a session that is gone
				}
				if err := sub.Err(); err != nil && !sub.Deleted() {
					w.bot.log.Error("telegram: stopped following a session; its replies are delivered at the next message or start", "session", w.sid, "err", err)
				}
				return
			}
			if w.onEvent(ctx, e) && w.ended() {
				return
			}
		case <-w.poked:
			if w.pos >= w.until && w.ended() {
				return
			}
		case <-typing.C:
			if w.asks == 0 {
				w.bot.typing(ctx, w.chat)
			}
		case <-w.editC():
			w.edit = nil
			w.flushPreview(ctx)
		}
	}
}

// follow reads the outbox record and follows the session after its last
// delivered seq.
func (w *watcher) follow(ctx context.Context) (*runtime.Subscription, error) {
	rec, ok, err := w.o.readRecord(w.sid)
	if err != nil {
		return nil, err
	}
	info, err := w.o.o.Loop.Session(ctx, w.sid)
	if err != nil {
		return nil, err
	}
	if !ok {
		rec = outRecord{Chat: w.chat, Delivered: info.LastSeq}
	}
	// w.chat stays as the outbox gave it (the record's, or the message's:
	// a session has one chat); the outbox goroutine reads it.
	w.rec, w.pos, w.until = rec, rec.Delivered, info.LastSeq
	return w.o.o.Loop.Follow(ctx, w.sid, rec.Delivered)
}

// poke makes the watcher ask again whether to end; it never blocks.
func (w *watcher) poke() {
	select {
	case w.poked <- struct{}{}:
	default:
	}
}

// ended asks the outbox whether the watcher may end, having handled
// everything up to pos; if not, it notes when to ask again. The record is
// written first: once the outbox lets it end, another watcher may start
// for the session, and only that one may write it then.
func (w *watcher) ended() bool {
	w.flush()
	var end bool
	var info runtime.SessionInfo
	if !w.o.do(func() { end, info = w.o.mayEnd(w, w.pos) }) || end {
		return true
	}
	w.until = info.LastSeq
	if info.Status.InTurn() {
		w.until = ^uint64(0)
	}
	return false
}

// onEvent handles one event; it reports when to ask whether to end: a
// turn's end, or the session's last seq seen when the outbox last looked.
func (w *watcher) onEvent(ctx context.Context, e runtime.Event) bool {
	if e.Type == runtime.EvToken {
		w.text.WriteString(e.Content)
		w.schedulePreview(ctx)
		return false
	}
	if e.Seq == 0 || e.Seq <= w.pos {
		return false // a live-only notice, or handled already
	}
	w.pos = e.Seq
	end := e.Type == runtime.EvTurnEnd || w.pos >= w.until
	if e.Seq == w.rec.Delivering {
		// It may have reached the chat before a crash: never twice.
		w.rec.Delivered, w.rec.Delivering, w.rec.Preview = e.Seq, 0, 0
		w.dirty = true
		return end
	}
	switch e.Type {
	case runtime.EvUserMessage:
		w.bot.typing(ctx, w.chat)
	case runtime.EvAssistant:
		if e.Origin != "" {
			// A notice (a schedule's reminder, a notification): a message
			// of its own, and a turn's preview goes on streaming.
			if strings.TrimSpace(e.Content) != "" {
				w.notice(ctx, e)
			}
			break
		}
		if strings.TrimSpace(e.Content) != "" {
			w.answer(ctx, e)
		}
		w.newRound()
	case runtime.EvApprovalRequired:
		if w.answered(ctx, e) {
			break // decided, or its turn over, before it was asked
		}
		w.asks++
		w.deliver(ctx, e.Seq, func() error { return w.askApproval(ctx, e) })
	case runtime.EvApprovalDecision:
		w.asks = max(w.asks-1, 0)
	case runtime.EvError:
		w.deliver(ctx, e.Seq, func() error {
			_, err := w.bot.post(ctx, Text{ChatID: w.chat, Text: "⚠️ " + e.Content}, "")
			return err
		})
	case runtime.EvTurnEnd:
		w.asks = 0
		if e.Reason == runtime.TurnFailed {
			w.discardUnanswered(ctx) // its error was delivered above
		}
		if w.o.turnEnded != nil {
			w.o.turnEnded(w.chat)
		}
		if e.Reason == runtime.TurnInterrupted {
			w.deliver(ctx, e.Seq, func() error {
				_, err := w.bot.post(ctx, Text{ChatID: w.chat, Text: "⚠️ agnx-lite stopped before the answer was finished: please send your message again."}, "")
				return err
			})
		}
		w.newRound()
	case runtime.EvSessionStart, runtime.EvSessionEnd, runtime.EvToken, runtime.EvToolCall,
		runtime.EvToolResult, runtime.EvToolProgress, runtime.EvSilentMessage, runtime.EvHistoryCompaction:
		// A chat gets answers, errors and approvals, not the steps
		// (tokens were handled above).
	}
	return end
}

// discardUnanswered removes the session when its first turn failed
// before a model said anything (runtime.Loop.DiscardUnanswered) and no
// message of the chat waits for the next turn: the chat was told why,
// and its next message starts a new session. The outbox record goes with
// it; the feed then closes as deleted and the watcher ends.
func (w *watcher) discardUnanswered(ctx context.Context) {
	if w.o.waiting != nil && w.o.waiting(w.chat) > 0 {
		return
	}
	gone, err := w.o.o.Loop.DiscardUnanswered(ctx, w.sid)
	if err != nil || !gone {
		return // kept: a session the loop cannot read is left as it is
	}
	w.dirty = false
	if err := w.o.o.Chats.PutKV(outKey(w.sid), nil); err != nil {
		w.bot.log.Warn("telegram: cannot forget a removed session's outbox", "session", w.sid, "err", err)
	}
}

// leave writes the record and takes the watcher out of the outbox's map
// (when the outbox has not already): a message sent after that starts
// another watcher.
func (w *watcher) leave() {
	w.flush()
	w.o.do(func() {
		if w.o.watchers[w.sid] == w {
			delete(w.o.watchers, w.sid)
		}
	})
}

// errFound stops a log read that found what it looked for.
var errFound = errors.New("found")

// answered reports whether the log already holds, after an approval
// request, its decision or its turn's end: the request was replayed
// (the gateway was down, or slow) and asking now would be asking too late.
func (w *watcher) answered(ctx context.Context, e runtime.Event) bool {
	err := w.o.o.Loop.Events(ctx, w.sid, e.Seq, func(x runtime.Event) error {
		if (x.Type == runtime.EvApprovalDecision && x.CallID == e.CallID) || x.Type == runtime.EvTurnEnd {
			return errFound
		}
		return nil
	})
	return errors.Is(err, errFound)
}

// deliver sends one durable event through the outbox record: marked
// delivering, durably, before the send (the one write a reply costs; it
// carries the previous delivery and the preview too), delivered after, in
// memory: a mark found at a restart is never sent again, so it says
// "delivered" as well. A send that surely did not happen because the
// gateway is stopping is unmarked, durably, so the next start sends it.
func (w *watcher) deliver(ctx context.Context, seq uint64, send func() error) {
	if ctx.Err() != nil {
		return // stopping: the next start delivers it
	}
	w.rec.Delivering = seq
	if !w.save() {
		w.rec.Delivering = 0
		return // not marked: better not sent now than maybe twice later
	}
	err := send()
	if err != nil {
		w.bot.log.Warn("telegram: cannot deliver a reply", "session", w.sid, "chat_id", w.chat, "seq", seq, "err", err)
	}
	if err != nil && ctx.Err() != nil && notSent(err) {
		w.rec.Delivering = 0
		w.save()
		return
	}
	w.rec.Delivered, w.rec.Delivering, w.rec.Preview = seq, 0, 0
	w.dirty = true
}

// save writes the record in the loop's next group commit.
func (w *watcher) save() bool {
	if err := w.o.putRecord(w.sid, w.rec); err != nil {
		w.bot.log.Error("telegram: cannot write the outbox", "session", w.sid, "err", err)
		return false
	}
	w.dirty = false
	return true
}

// flush writes the record if it moved on: once, when the watcher ends
// (its turn is over, or the gateway stops), so the next watcher starts
// after what was delivered and a preview survives a stop.
func (w *watcher) flush() {
	if w.dirty {
		w.save()
	}
}
