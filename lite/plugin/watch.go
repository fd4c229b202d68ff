package plugin

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// watchers follow the sessions whose turns run for a plugin's chats: one
// goroutine per session, subscribed before the message is sent and
// stopped once the session is idle, so idle chats cost nothing.
type watchers struct {
	m      map[string]*watch // by session id
	events chan watchEvent   // from the watcher goroutines
	wg     sync.WaitGroup
}

type watch struct {
	sid, chat, chatType string
	replyTo             string // the last message sent, for reply_to
	lastSent            uint64 // its seq: a turn_end before it is not the last
	cancel              context.CancelFunc
}

type watchKind int

const (
	watchApproval watchKind = iota
	watchTurnEnd
	watchGone
)

type watchEvent struct {
	w    *watch
	kind watchKind
	seq  uint64
	text string // turn_end: the answer to send
	// approval_required
	callID, tool, subject string
	lagged                bool
}

// watch returns the session's watcher, starting one.
func (b *bridge) watch(ctx context.Context, sid string, in agents.Inbound) (*watch, error) {
	if w := b.m[sid]; w != nil {
		w.chatType = in.ChatType
		return w, nil
	}
	sub, err := b.rt.Subscribe(ctx, sid)
	if err != nil {
		return nil, err
	}
	// The watcher's life is bounded by the Gateway's (closeWatches), not
	// by the call's ctx.
	wctx, cancel := context.WithCancel(context.Background())
	w := &watch{sid: sid, chat: in.ChatID, chatType: in.ChatType, cancel: cancel}
	b.m[sid] = w
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		w.run(wctx, sub, b.events)
	}()
	return w, nil
}

// run follows the session's events and posts what the chat must hear.
// Tokens are ignored: the final answer is sent whole.
func (w *watch) run(ctx context.Context, sub *runtime.Subscription, out chan<- watchEvent) {
	defer sub.Close()
	post := func(e watchEvent) bool {
		e.w = w
		select {
		case out <- e:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var text, failure string
	for {
		var e runtime.Event
		var ok bool
		select {
		case <-ctx.Done():
			return
		case e, ok = <-sub.C():
		}
		if !ok {
			post(watchEvent{kind: watchGone, lagged: sub.Err() != nil})
			return
		}
		switch e.Type {
		case runtime.EvAssistant:
			if strings.TrimSpace(e.Content) != "" {
				text = e.Content
			}
		case runtime.EvError:
			failure = e.Content
		case runtime.EvApprovalRequired:
			ok = post(watchEvent{kind: watchApproval, callID: e.CallID, tool: e.ToolName, subject: e.Content})
		case runtime.EvTurnEnd:
			ok = post(watchEvent{kind: watchTurnEnd, seq: e.Seq, text: answer(text, failure, e.Reason)})
			text, failure = "", ""
		default:
			// A chat gets answers, errors and approvals, not the steps.
		}
		if !ok {
			return
		}
	}
}

// answer is what a turn says to the chat: its last assistant text, or
// why it failed.
func answer(text, failure, reason string) string {
	if text != "" || reason != runtime.TurnFailed {
		return text
	}
	if failure != "" {
		return failure
	}
	return sayTurnFailed
}

// onWatch handles a watcher's news on the Gateway's goroutine.
func (b *bridge) onWatch(ctx context.Context, e watchEvent) {
	w := e.w
	if b.m[w.sid] != w {
		return // a watcher already stopped
	}
	switch e.kind {
	case watchApproval:
		b.onApproval(w, e)
	case watchGone:
		delete(b.m, w.sid)
		w.cancel()
		if e.lagged {
			b.log.Warn("plugin gateway lost a session's events; a reply may be missing", "plugin", b.name, "session", w.sid)
		}
	case watchTurnEnd:
		if e.text != "" {
			b.say(w.chat, w.replyTo, e.text, nil)
		}
		b.forget(w.sid)
		if w.lastSent > e.seq || b.running(ctx, w.sid) {
			return // a message sent later starts or waits for another turn
		}
		delete(b.m, w.sid)
		w.cancel()
	}
}

// running reports whether the session has a turn running or queued.
func (b *bridge) running(ctx context.Context, sid string) bool {
	info, err := b.rt.Session(ctx, sid)
	if err != nil {
		b.log.Log(ctx, slog.LevelDebug, "plugin gateway cannot read a session", "session", sid, "err", err)
		return false
	}
	return info.Status == "running"
}

// closeWatches stops every watcher and waits for them.
func (b *bridge) closeWatches() {
	for sid, w := range b.m {
		w.cancel()
		delete(b.m, sid)
	}
	b.wg.Wait()
}
