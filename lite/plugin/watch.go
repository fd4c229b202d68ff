package plugin

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// A watcher follows one session for its chat while the plugin is up: it
// reads the session from the outbox's position (runtime.Loop.Follow: the
// log, then live, no gap, no duplicate) and posts what the chat must hear
// to the Gateway's goroutine, one message at a time: it waits until the
// plugin acknowledged one before it posts the next, so a plugin that is
// slow or down holds no queue of replies in memory (the log is the
// queue). Watchers run only for followed sessions, from a message of the
// chat until the session is idle again; they are stopped when the plugin
// goes down and started again, from the durable position, once it is
// ready.
type watch struct {
	sid       string
	from      uint64        // read the log after this seq
	delivered uint64        // nothing up to this seq is posted again
	edge      uint64        // the session's last seq when the watcher started
	ackWait   time.Duration // how long a reply may go unacknowledged
	cancel    context.CancelFunc
	next      chan struct{} // the Gateway's goroutine lets the watcher go on
}

type watchKind int

const (
	watchApproval watchKind = iota
	watchTurnEnd
	watchGone
	watchAckLate // the plugin did not acknowledge the reply at seq in time
	watchNotice  // an assistant_response with an origin: sent as it comes
)

type watchEvent struct {
	w    *watch
	kind watchKind
	seq  uint64
	text string // turn_end: the answer to send
	// approval_required
	callID, tool, subject string
	// gone: why
	deleted, ended bool
	err            error
}

// watchers is the Gateway goroutine's side of the watchers.
type watchers struct {
	open     map[string]*outbox // followed sessions, by session id
	outgoing map[string]*outbox // by the request id of the message each awaits the ack of
	events   chan watchEvent    // from the watcher goroutines
	wg       sync.WaitGroup
}

// follow starts the session's watcher from its durable position.
func (b *bridge) follow(ctx context.Context, o *outbox) {
	edge := o.rec.Delivered
	if info, err := b.rt.Session(ctx, o.sid); err == nil {
		edge = info.LastSeq
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &watch{sid: o.sid, from: o.rec.From, delivered: o.rec.Delivered, edge: edge, ackWait: b.t.AckTimeout,
		cancel: cancel, next: make(chan struct{}, 1)}
	o.w, o.sending = w, ""
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		w.run(wctx, b.rt, b.events)
	}()
}

// unfollow stops the session's watcher, if it runs.
func (b *bridge) unfollow(o *outbox) {
	if o.w != nil {
		o.w.cancel()
		o.w = nil
	}
	if o.sending != "" {
		delete(b.outgoing, o.sending)
		o.sending = ""
	}
}

// resume starts a watcher for every followed session that has none: when
// the plugin is ready.
func (b *bridge) resume(ctx context.Context) {
	for _, o := range b.open {
		if o.w == nil {
			b.follow(ctx, o)
		}
	}
}

// pause stops every watcher, keeping the sessions followed: when the
// plugin goes down, what it is owed stays in the log.
func (b *bridge) pause() {
	for _, o := range b.open {
		b.unfollow(o)
	}
	clear(b.outgoing)
}

// flushed reports whether no watcher runs: every followed session was
// delivered and is idle, or waits for the plugin's next start.
func (b *bridge) flushed() bool {
	for _, o := range b.open {
		if o.w != nil {
			return false
		}
	}
	return true
}

// closeWatches stops every watcher and waits for them.
func (b *bridge) closeWatches() {
	b.pause()
	b.wg.Wait()
}

// run follows the session's events and posts what the chat must hear.
// Tokens are ignored: the final answer is sent whole. An approval read
// from the log before the edge is held until the edge: one decided since
// (the plugin was down) is not asked again.
func (w *watch) run(ctx context.Context, rt Runtime, out chan<- watchEvent) {
	sub, err := rt.Follow(ctx, w.sid, w.from)
	if err != nil {
		w.post(ctx, out, watchEvent{kind: watchGone, err: err, deleted: err == runtime.ErrSessionNotFound})
		return
	}
	defer sub.Close()
	var text, failure, notice string
	var held []watchEvent
	for {
		var e runtime.Event
		var ok bool
		select {
		case <-ctx.Done():
			return
		case e, ok = <-sub.C():
		}
		if !ok {
			w.post(ctx, out, watchEvent{kind: watchGone, deleted: sub.Deleted(), err: sub.Err()})
			return
		}
		switch e.Type {
		case runtime.EvAssistant:
			if e.Origin != "" {
				// A notice (Loop.Notice): said now, not the turn's answer.
				if e.Seq > w.delivered && strings.TrimSpace(e.Content) != "" &&
					!w.send(ctx, out, watchEvent{kind: watchNotice, seq: e.Seq, text: e.Content}) {
					return
				}
				break
			}
			if strings.TrimSpace(e.Content) != "" {
				text = e.Content
			}
		case runtime.EvError:
			if runtime.Advisory(e.Code) {
				notice = e.Content // said after the answer it follows
			} else {
				failure = e.Content
			}
		case runtime.EvApprovalRequired:
			if e.Seq > w.delivered {
				held = append(held, watchEvent{kind: watchApproval, seq: e.Seq, callID: e.CallID, tool: e.ToolName, subject: e.Content})
			}
		case runtime.EvApprovalDecision:
			held = dropCall(held, e.CallID)
		case runtime.EvTurnEnd:
			held = held[:0]
			if e.Reason == runtime.TurnFailed {
				// A first turn that never reached a model leaves no
				// session: removed before the chat is told why, so its
				// next message finds it gone and starts another. The feed
				// then closes as deleted, after this turn_end.
				_, _ = rt.DiscardUnanswered(ctx, w.sid)
			}
			if e.Seq > w.delivered && !w.send(ctx, out, watchEvent{kind: watchTurnEnd, seq: e.Seq, text: answer(text, failure, notice, e.Reason)}) {
				return
			}
			text, failure, notice = "", "", ""
		case runtime.EvSessionEnd:
			w.post(ctx, out, watchEvent{kind: watchGone, ended: true})
			return
		case runtime.EvSessionStart, runtime.EvUserMessage, runtime.EvToken, runtime.EvToolCall,
			runtime.EvToolResult, runtime.EvToolProgress, runtime.EvSilentMessage, runtime.EvHistoryCompaction:
			// A chat gets answers, errors and approvals, not the steps.
		}
		if e.Seq >= w.edge {
			for _, h := range held {
				if !w.send(ctx, out, h) {
					return
				}
			}
			held = held[:0]
		}
	}
}

func dropCall(held []watchEvent, callID string) []watchEvent {
	kept := held[:0]
	for _, h := range held {
		if h.callID != callID {
			kept = append(kept, h)
		}
	}
	return kept
}

// post hands e to the Gateway's goroutine; false means the watcher stops.
func (w *watch) post(ctx context.Context, out chan<- watchEvent, e watchEvent) bool {
	e.w = w
	select {
	case out <- e:
		return true
	case <-ctx.Done():
		return false
	}
}

// send posts e and waits until the Gateway's goroutine is done with it
// (the plugin acknowledged the message, or there was nothing to send).
// A plugin that does not acknowledge in time is reported once: the
// Gateway's goroutine then counts the reply as delivered.
func (w *watch) send(ctx context.Context, out chan<- watchEvent, e watchEvent) bool {
	if !w.post(ctx, out, e) {
		return false
	}
	late := time.NewTimer(w.ackWait)
	defer late.Stop()
	for {
		select {
		case <-w.next:
			return true
		case <-late.C:
			if !w.post(ctx, out, watchEvent{kind: watchAckLate, seq: e.seq}) {
				return false
			}
		case <-ctx.Done():
			return false
		}
	}
}

// answer is what a turn says to the chat: its last assistant text, or
// why it failed; the tool-limit notice follows the answer.
func answer(text, failure, notice, reason string) string {
	switch {
	case text != "" && notice != "":
		return text + "\n\n⚠️ " + notice
	case text != "" || reason != runtime.TurnFailed:
		return text
	case failure != "":
		return failure
	}
	return sayTurnFailed
}

// onWatch handles a watcher's news on the Gateway's goroutine.
func (b *bridge) onWatch(ctx context.Context, e watchEvent) {
	o := b.open[e.w.sid]
	if o == nil || o.w != e.w {
		return // a watcher already stopped
	}
	switch e.kind {
	case watchApproval:
		b.onApproval(o, e)
	case watchGone:
		b.gone(ctx, o, e)
	case watchAckLate:
		// A reply that was dropped waits for the restart that a plugin
		// which does not read gets (it misses its pongs).
		if o.sending != "" && o.seq == e.seq && !o.dropped {
			b.limit.log(b.log, slog.LevelWarn, "plugin gateway did not acknowledge a reply in time; counting it as delivered",
				"plugin", b.name, "session", o.sid, "request_id", o.sending, "timeout", b.t.AckTimeout.String())
			delete(b.outgoing, o.sending)
			b.acked(ctx, o, o.seq, o.turnEnd)
		}
	case watchNotice:
		b.sendReply(o, e, e.text, "", nil)
	case watchTurnEnd:
		b.queue.Kick(b.queueKey(o.rec.Chat))
		b.forget(o.sid)
		if e.text == "" {
			b.acked(ctx, o, e.seq, true)
			return
		}
		b.sendReply(o, e, e.text, o.replyTo, nil)
	}
}
