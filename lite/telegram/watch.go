package telegram

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// watcher follows one session while it has a turn running: it shows
// "typing…", streams the answer into one message, delivers answers,
// approval requests and errors through the outbox, and ends once no turn
// runs. All its fields are its goroutine's own.
type watcher struct {
	g    *Gateway
	sid  string
	chat int64
	sub  *runtime.Subscription
	upTo uint64 // the log's end when subscribed: catch up to here
	rec  outRecord
	pos  uint64 // last durable seq handled

	text     strings.Builder // this round's streamed text
	lastEdit time.Time
	edit     *time.Timer // pending preview edit, nil when none
	noPrev   bool        // the preview failed to send this round
	asks     int         // approvals waiting
}

// subscribe follows the session's live events; what was committed before
// (up to upTo) is read from the log by catchUp.
func (w *watcher) subscribe(ctx context.Context) error {
	sub, err := w.g.o.Loop.Subscribe(ctx, w.sid)
	if err != nil {
		return err
	}
	info, err := runtime.ReadSession(w.g.o.Store, w.sid)
	if err != nil {
		sub.Close()
		return err
	}
	w.sub, w.upTo = sub, info.LastSeq
	return nil
}

func (w *watcher) run(ctx context.Context) {
	defer w.g.wg.Done()
	defer func() { w.sub.Close() }()
	typing := time.NewTicker(w.g.o.TypingInterval)
	defer typing.Stop()
	defer w.stopEdit()
	w.catchUp(ctx)
	if w.finished() {
		return
	}
	for {
		select {
		case <-ctx.Done():
			w.g.forget(w)
			return
		case e, ok := <-w.sub.C():
			if !ok {
				if !w.resubscribe(ctx) {
					w.g.forget(w)
					return
				}
				continue
			}
			if w.onEvent(ctx, e) && w.finished() {
				return
			}
		case <-typing.C:
			if w.asks == 0 {
				w.g.typing(ctx, w.chat)
			}
		case <-w.editC():
			w.edit = nil
			w.flushPreview(ctx)
		}
	}
}

// resubscribe follows the session again after the subscription was
// dropped for lagging, reading what it missed from the log.
func (w *watcher) resubscribe(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	if err := w.subscribe(ctx); err != nil {
		w.g.log.Error("telegram: cannot follow a session", "session", w.sid, "err", err)
		return false
	}
	w.catchUp(ctx)
	return true
}

// finished ends the watcher when no turn runs and every committed event
// was handled (a quick turn may be over before the watcher looks; its
// events are still on their way in the subscription). It holds g.mu,
// which watchAndSend holds across its Send: a message committed before
// the check keeps the watcher, one after it finds no watcher and starts
// one.
func (w *watcher) finished() bool {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	info, err := runtime.ReadSession(w.g.o.Store, w.sid)
	if err == nil && (info.Status == "running" || info.LastSeq > w.pos) {
		return false
	}
	delete(w.g.watchers, w.sid)
	return true
}

func (g *Gateway) forget(w *watcher) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.watchers[w.sid] == w {
		delete(g.watchers, w.sid)
	}
}

// catchUp delivers what the log holds between the outbox position and the
// subscription's start. An approval already decided is not asked again.
func (w *watcher) catchUp(ctx context.Context) {
	if w.pos >= w.upTo {
		return
	}
	var evs []runtime.Event
	stop := errors.New("stop")
	err := runtime.ReadEvents(w.g.o.Store, w.sid, w.pos, func(e runtime.Event) error {
		if e.Seq > w.upTo {
			return stop
		}
		evs = append(evs, e)
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		w.g.log.Error("telegram: cannot read a session's log", "session", w.sid, "err", err)
		return
	}
	decided := map[string]bool{}
	for _, e := range evs {
		if e.Type == runtime.EvApprovalDecision {
			decided[e.CallID] = true
		}
	}
	for _, e := range evs {
		if e.Type == runtime.EvApprovalRequired && decided[e.CallID] {
			continue
		}
		w.onEvent(ctx, e)
	}
}

// onEvent handles one event; it reports a turn's end.
func (w *watcher) onEvent(ctx context.Context, e runtime.Event) bool {
	if e.Type == runtime.EvToken {
		w.text.WriteString(e.Content)
		w.schedulePreview(ctx)
		return false
	}
	if e.Seq != 0 && e.Seq <= w.pos {
		return false // delivered before, or read from the log already
	}
	if e.Seq != 0 {
		w.pos = e.Seq
	}
	if e.Seq != 0 && e.Seq == w.rec.Delivering {
		// It may have reached the chat before a crash: never twice.
		w.rec.Delivered, w.rec.Delivering, w.rec.Preview = e.Seq, 0, 0
		w.save()
		return e.Type == runtime.EvTurnEnd
	}
	switch e.Type {
	case runtime.EvUserMessage:
		w.g.typing(ctx, w.chat)
	case runtime.EvAssistant:
		if strings.TrimSpace(e.Content) != "" {
			w.answer(ctx, e)
		}
		w.newRound()
	case runtime.EvApprovalRequired:
		w.asks++
		w.deliver(ctx, e.Seq, func() error { return w.g.askApproval(ctx, w.chat, w.sid, e) })
	case runtime.EvApprovalDecision:
		w.asks = max(w.asks-1, 0)
	case runtime.EvError:
		w.deliver(ctx, e.Seq, func() error {
			_, err := w.g.post(ctx, Text{ChatID: w.chat, Text: "⚠️ " + e.Content}, "")
			return err
		})
	case runtime.EvTurnEnd:
		w.asks = 0
		if e.Reason == runtime.TurnInterrupted {
			w.deliver(ctx, e.Seq, func() error {
				_, err := w.g.post(ctx, Text{ChatID: w.chat, Text: "⚠️ agnx-lite stopped before the answer was finished: please send your message again."}, "")
				return err
			})
		}
		w.newRound()
		return true
	default:
		// A chat gets answers, errors and approvals, not the steps
		// (tokens were handled above).
	}
	return false
}

// deliver sends one durable event through the outbox: marked delivering
// before the send, delivered after. Seq 0 (a live-only notice) is just
// sent. A send that surely did not happen because the gateway is stopping
// is unmarked, so the next start sends it.
func (w *watcher) deliver(ctx context.Context, seq uint64, send func() error) {
	if ctx.Err() != nil {
		return // stopping: the next start delivers it
	}
	if seq != 0 {
		w.rec.Delivering = seq
		if !w.save() {
			return // not marked: better not sent now than maybe twice later
		}
	}
	err := send()
	if err != nil {
		w.g.log.Warn("telegram: cannot deliver a reply", "session", w.sid, "chat_id", w.chat, "seq", seq, "err", err)
	}
	if seq == 0 {
		return
	}
	if err != nil && ctx.Err() != nil && notSent(err) {
		w.rec.Delivering = 0
	} else {
		w.rec.Delivered, w.rec.Delivering, w.rec.Preview = seq, 0, 0
	}
	w.save()
}

func (w *watcher) save() bool {
	if err := w.g.putRecord(w.sid, w.rec); err != nil {
		w.g.log.Error("telegram: cannot write the outbox", "session", w.sid, "err", err)
		return false
	}
	return true
}
