package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Follow has the gateway deliver what the session, one of chat's own,
// says to chat from its outbox record on, as it delivers replies: a schedule's notice, a turn a
// schedule or webhook started. Call it once what is to be delivered is
// committed (a notice, a task's message): the watcher it starts, or the
// one already running, sees it. A session without a record yet gets one
// from just before the events nobody has seen (see startSeq), so a Follow
// that comes after the commit still delivers them; what a crash left
// undelivered is delivered at the next start. Nothing is delivered twice.
func (g *Gateway) Follow(ctx context.Context, sid string, chat int64) error {
	g.mu.Lock()
	running := g.running
	g.mu.Unlock()
	if !running {
		return errors.New("telegram: the gateway is not running: the chat gets the message when it starts")
	}
	if chat == 0 {
		return errors.New("telegram: chat 0 is not a chat: give the chat's id")
	}
	return g.out.follow(ctx, sid, chat)
}

// follow writes sid's record when it has none and starts its watcher;
// both on the outbox goroutine, so no watcher of sid writes the record
// meanwhile.
func (o *outbox) follow(ctx context.Context, sid string, chat int64) error {
	info, err := o.o.Loop.Session(ctx, sid)
	if err != nil {
		return err
	}
	if info.Gateway != GatewayName || info.ChatID != strconv.FormatInt(chat, 10) {
		return fmt.Errorf("telegram: session %s is not a session of chat %d: a chat is delivered only its own sessions", sid, chat)
	}
	ok := o.do(func() {
		if err = o.openFrom(ctx, sid, chat, true); err == nil {
			if w := o.startWatcher(sid, chat); w != nil {
				w.poke() // an ending watcher looks again
			}
		}
	})
	if !ok {
		return errors.New("telegram: the gateway is stopping: the chat gets the message at the next start")
	}
	return err
}

// openFrom writes sid's record when it has none (an existing one is the
// watcher's): from the session's end (a chat's first message: what was
// said before is not the chat's), or, with unseen, from just before the
// events nobody has seen.
func (o *outbox) openFrom(ctx context.Context, sid string, chat int64, unseen bool) error {
	if o.watchers[sid] != nil {
		return nil // it has a record: a watcher runs only for one
	}
	if _, ok, err := o.readRecord(sid); err != nil || ok {
		return err
	}
	info, err := o.o.Loop.Session(ctx, sid)
	if err != nil {
		return err
	}
	from := info.LastSeq
	if unseen {
		if from, err = runtime.UnseenFrom(ctx, o.o.Loop, sid, 0, info.LastSeq); err != nil {
			return err
		}
	}
	return o.putRecord(sid, outRecord{Chat: chat, Delivered: from})
}

// recoverUnseen starts, at a start, the delivery of a session of a chat
// of this gateway that has no record yet but has events nobody saw (a
// notice committed just before a crash, or before the gateway ran). On
// the outbox goroutine.
func (o *outbox) recoverUnseen(s runtime.SessionInfo) {
	chat, err := strconv.ParseInt(s.ChatID, 10, 64)
	if err != nil || chat == 0 {
		return
	}
	from, err := runtime.UnseenFrom(o.ctx, o.o.Loop, s.ID, 0, s.LastSeq)
	if err != nil || from >= s.LastSeq {
		return
	}
	if err := o.putRecord(s.ID, outRecord{Chat: chat, Delivered: from}); err != nil {
		o.bot.log.Error("telegram: cannot write the outbox", "session", s.ID, "err", err)
		return
	}
	o.startWatcher(s.ID, chat)
}
