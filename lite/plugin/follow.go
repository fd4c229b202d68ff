package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// followQueue bounds the Follow requests waiting for the Gateway's
// goroutine (it reads them while a plugin process runs).
const followQueue = 16

// followReq is a Follow for the Gateway's goroutine.
type followReq struct {
	sid, chat string
	reply     chan error // buffered: the Gateway's goroutine never waits
}

// Follow has the plugin's chat follow one of its sessions it did not send
// a message to: what the session says that the chat has not seen (a schedule's or a
// notification's notice, sent as send_message without reply_to; a turn a
// schedule or webhook started, its answer when it ends) is delivered as
// replies are, once acknowledged, never twice. Call it once what is to be
// delivered is committed. It returns when the Gateway has recorded the
// chat's position (durably: a restart delivers what is left); while the
// plugin restarts, that waits until it runs again or ctx ends.
func (g *Gateway) Follow(ctx context.Context, sid, chat string) error {
	if sid == "" || chat == "" {
		return errors.New("follow needs a session and a chat id")
	}
	r := followReq{sid: sid, chat: chat, reply: make(chan error, 1)}
	select {
	case g.b.follows <- r:
	case <-g.done:
		return errStopped
	case <-ctx.Done():
		return fmt.Errorf("the plugin gateway %s is busy or restarting: the chat was not followed (%w)", g.o.Name, ctx.Err())
	}
	select {
	case err := <-r.reply:
		return err
	case <-g.done:
		return errStopped
	case <-ctx.Done():
		return fmt.Errorf("the plugin gateway %s is restarting: the chat follows the session once it runs again (%w)", g.o.Name, ctx.Err())
	}
}

// onFollow answers a Follow on the Gateway's goroutine.
func (b *bridge) onFollow(ctx context.Context, r followReq) {
	r.reply <- b.followSession(ctx, r.sid, r.chat)
}

// followSession opens the session's outbox from what the chat has not
// seen (see unseenFrom) and starts its watcher when the plugin is ready;
// a session already followed needs nothing more (its watcher reads on).
func (b *bridge) followSession(ctx context.Context, sid, chat string) error {
	if o := b.open[sid]; o != nil {
		if o.rec.Chat != chat {
			return fmt.Errorf("session %s is not a session of the %s chat %s: a chat is delivered only its own sessions", sid, b.name, chat)
		}
		if o.w == nil && b.ready && !b.stopping {
			b.follow(ctx, o)
		}
		return nil
	}
	old, err := b.record(ctx, sid)
	if err != nil {
		return err
	}
	info, err := b.rt.Session(ctx, sid)
	if err != nil {
		return err
	}
	if info.Gateway != b.name || info.ChatID != chat {
		return fmt.Errorf("session %s is not a session of the %s chat %s: a chat is delivered only its own sessions", sid, b.name, chat)
	}
	from, err := runtime.UnseenFrom(ctx, b.rt, sid, old.Delivered, info.LastSeq)
	if err != nil {
		return err
	}
	if from >= info.LastSeq && !info.Status.InTurn() {
		return nil // nothing the chat has not seen
	}
	o := &outbox{sid: sid, rec: record{Chat: chat, ChatType: old.ChatType, From: from, Delivered: from, Open: true}}
	if err := b.rt.PutKV(ctx, outKey(b.name, sid), o.rec.encode()); err != nil {
		return fmt.Errorf("the plugin gateway %s cannot record the chat's position: %w", b.name, err)
	}
	b.open[sid] = o
	if b.ready && !b.stopping {
		b.follow(ctx, o)
	}
	return nil
}

// record reads the session's outbox record (zero when it has none).
func (b *bridge) record(ctx context.Context, sid string) (record, error) {
	var r record
	data, err := b.rt.KV(ctx, outKey(b.name, sid))
	if err != nil || data == nil {
		return r, err
	}
	if json.Unmarshal(data, &r) != nil {
		return record{}, nil
	}
	return r, nil
}

// recoverUnseen opens, at the start, a session of this gateway's chats
// that is not followed but has events its chat has not seen: a notice
// committed just before a crash, before its Follow.
func (b *bridge) recoverUnseen(ctx context.Context, s runtime.SessionInfo, old record) {
	if s.ChatID == "" || s.Status == runtime.SessionCompleted {
		return
	}
	from, err := runtime.UnseenFrom(ctx, b.rt, s.ID, old.Delivered, s.LastSeq)
	if err != nil || from >= s.LastSeq {
		return
	}
	o := &outbox{sid: s.ID, rec: record{Chat: s.ChatID, ChatType: old.ChatType, From: from, Delivered: from, Open: true}}
	b.put(ctx, o)
	b.open[s.ID] = o
}
