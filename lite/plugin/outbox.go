package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// record is a followed session's outbox position, kept in kv under
// outKey and written through the loop's group commit: with the first
// message of a conversation (as the message's cursor, in its own
// transaction), at each acknowledged reply, and when the session goes
// idle.
type record struct {
	Chat     string `json:"chat"`
	ChatType string `json:"chat_type,omitempty"`
	// From is the last turn_end handled: a turn's answer is read from
	// the log after it.
	From uint64 `json:"from"`
	// Delivered is the last seq whose message the plugin acknowledged
	// (or that had nothing to say): nothing up to it is sent again.
	Delivered uint64 `json:"delivered"`
	// Open means the chat follows the session: a turn runs or waits to
	// be delivered. A closed record is not resumed after a restart.
	Open bool `json:"open,omitempty"`
}

func outKey(plugin, sid string) string { return "plugin/" + plugin + "/out/" + sid }

func (r record) encode() []byte {
	data, _ := json.Marshal(r) // strings and numbers only
	return data
}

// outbox is what the Gateway's goroutine knows of one followed session.
// Idle sessions have none: no memory and no goroutine.
type outbox struct {
	sid     string
	rec     record
	replyTo string // the chat's last message, for reply_to (not durable)
	w       *watch // the session's watcher; nil while the plugin is down
	sending string // the request id of the message awaiting its ack
	seq     uint64 // the seq that message delivers
	turnEnd bool   // it is a turn's answer
	notice  bool   // it is a notice (an assistant_response with an origin)
	dropped bool   // it was dropped: the plugin does not read
}

// recover finds the sessions whose chats were followed when the daemon
// last stopped (their replies may be owed); they are resumed once the
// plugin is ready.
func (b *bridge) recover(ctx context.Context) {
	list, err := b.rt.Sessions(ctx)
	if err != nil {
		b.log.Error("plugin gateway cannot list sessions to deliver pending replies", "plugin", b.name, "err", err)
		return
	}
	for _, s := range list {
		if s.Gateway != b.name {
			continue
		}
		r, err := b.record(ctx, s.ID)
		if err != nil {
			continue
		}
		if !r.Open || r.Chat == "" {
			b.recoverUnseen(ctx, s, r)
			continue
		}
		b.open[s.ID] = &outbox{sid: s.ID, rec: r}
	}
}

// put writes the session's record; a failure is logged (the reply it
// marks may be sent again after a restart).
func (b *bridge) put(ctx context.Context, o *outbox) {
	if err := b.rt.PutKV(ctx, outKey(b.name, o.sid), o.rec.encode()); err != nil {
		b.log.Error("plugin gateway cannot record a delivered reply; it may be sent again after a restart",
			"plugin", b.name, "session", o.sid, "err", err)
	}
}

// begin makes sure the chat follows its session from before a message
// the chat sends: it returns the outbox, and for a session not followed
// yet a new one with the cursor to commit with the message (so that the
// record is open exactly when the message is stored).
func (b *bridge) begin(ctx context.Context, sid, chat, chatType string) (*outbox, *runtime.Cursor, error) {
	if o := b.open[sid]; o != nil {
		return o, nil, nil
	}
	info, err := b.rt.Session(ctx, sid)
	if err != nil {
		return nil, nil, err
	}
	o := &outbox{sid: sid, rec: record{Chat: chat, ChatType: chatType, From: info.LastSeq, Delivered: info.LastSeq, Open: true}}
	return o, &runtime.Cursor{Key: outKey(b.name, sid), Value: o.rec.encode()}, nil
}

// sendReply sends what a watcher found and remembers it until the
// plugin acknowledges it.
func (b *bridge) sendReply(o *outbox, e watchEvent, text, replyTo string, kb *InlineKeyboard) {
	id, queued := b.say(o.rec.Chat, replyTo, text, kb)
	o.sending, o.seq, o.turnEnd, o.dropped = id, e.seq, e.kind == watchTurnEnd, !queued
	o.notice = e.kind == watchNotice
	b.outgoing[id] = o
}

// acked records that the plugin has the message o was sending (or that
// a turn had nothing to say): the position moves past it, and the
// watcher goes on, or stops when the session is idle.
func (b *bridge) acked(ctx context.Context, o *outbox, seq uint64, turnEnd bool) {
	o.sending = ""
	o.rec.Delivered = max(o.rec.Delivered, seq)
	if turnEnd || o.notice {
		// A notice may be all the session says: it stops being followed
		// once idle after it, as after a turn.
		o.notice = false
		idle := b.idleAfter(ctx, o.sid, seq)
		if turnEnd || idle {
			o.rec.From = max(o.rec.From, seq)
		}
		if idle {
			o.rec.Open = false
			b.put(ctx, o)
			b.unfollow(o)
			delete(b.open, o.sid)
			return
		}
	}
	b.put(ctx, o)
	if o.w != nil {
		select {
		case o.w.next <- struct{}{}:
		default:
		}
	}
}

// gone handles a watcher whose subscription ended.
func (b *bridge) gone(ctx context.Context, o *outbox, e watchEvent) {
	b.unfollow(o)
	switch {
	case e.deleted:
		delete(b.open, o.sid)
		if err := b.rt.PutKV(ctx, outKey(b.name, o.sid), nil); err != nil {
			b.log.Warn("plugin gateway cannot forget a deleted session's outbox", "plugin", b.name, "session", o.sid, "err", err)
		}
	case e.ended:
		delete(b.open, o.sid)
		o.rec.Open = false
		b.put(ctx, o)
	case e.err != nil && !errors.Is(e.err, runtime.ErrClosed):
		// Kept open: resumed from its position when the plugin is next ready.
		b.log.Error("plugin gateway cannot follow a session; its replies wait for the plugin's next start",
			"plugin", b.name, "session", o.sid, "err", e.err)
	default:
		b.log.Log(ctx, slog.LevelDebug, "plugin gateway stopped following a session: the runtime stopped", "plugin", b.name, "session", o.sid)
	}
}

// idleAfter reports whether the session's turn_end at seq is its last
// event and no turn runs or waits: the chat stops following it. A
// message the chat sends later opens the outbox again; one sent from
// elsewhere (HTTP, the CLI) while the chat does not follow is not the
// chat's to hear.
func (b *bridge) idleAfter(ctx context.Context, sid string, seq uint64) bool {
	info, err := b.rt.Session(ctx, sid)
	if err != nil {
		b.log.Log(ctx, slog.LevelDebug, "plugin gateway cannot read a session", "session", sid, "err", err)
		return false
	}
	return !info.Status.InTurn() && info.LastSeq <= seq
}
