package telegram

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/inbox"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// queued is what the queue keeps of a Telegram message.
type queued struct {
	sid  string
	chat int64
}

func queueKey(chat int64) string { return strconv.FormatInt(chat, 10) }

// busy reports whether the chat's session runs a turn (the queue's
// timers ask, from their own goroutines).
func (g *poller) busy(_ string, last inbox.Item) bool {
	q, _ := last.Ref.(queued)
	return g.sessionBusy(g.base, q.sid)
}

func (g *poller) sessionBusy(ctx context.Context, sid string) bool {
	ctx, cancel := context.WithTimeout(ctx, g.o.CallTimeout)
	defer cancel()
	info, err := g.o.Loop.Session(ctx, sid)
	return err == nil && info.Status.InTurn()
}

// deliverQueued hands waiting messages on as one message, with the
// session's watcher held around it as sendUser does (from a queue timer).
func (g *poller) deliverQueued(key string, items []inbox.Item) { g.handOn(g.base, key, items) }

func (g *poller) handOn(base context.Context, key string, items []inbox.Item) {
	it := inbox.Join(items)
	q, ok := it.Ref.(queued)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(base, g.o.CallTimeout)
	defer cancel()
	w, err := g.out.hold(ctx, q.sid, q.chat)
	if err != nil {
		g.bot.log.Error("telegram: queued messages not delivered", "chat_id", key, "messages", len(items), "err", err)
		return
	}
	_, err = g.o.Loop.Send(ctx, q.sid, runtime.Input{Content: it.Text, SenderID: it.SenderID, SenderName: it.SenderName})
	g.out.release(w, q.sid, q.chat, err == nil)
	if err != nil {
		g.bot.log.Error("telegram: queued messages not delivered", "chat_id", key, "messages", len(items), "err", err)
	}
}

// stopQueue hands on what waits at stop, joined per chat: the runtime
// keeps it for the turn after the running one, also across the restart.
func (g *poller) stopQueue() {
	for _, l := range g.queue.Stop() {
		g.handOn(context.WithoutCancel(g.base), l.Key, l.Items)
	}
}

// admit checks the chat's agent's access before anything else; a refusal
// is answered (once a while; in a group only when the bot was addressed)
// and ok is false. Only retryable errors are returned.
func (g *poller) admit(ctx context.Context, m *Message, in agents.Inbound, create bool) (ad inbox.Admission, ok bool, err error) {
	ad, err = g.o.Chats.Admit(ctx, in, create)
	var ae *agents.AccessError
	switch {
	case err == nil:
		return ad, true, nil
	case errors.As(err, &ae):
		g.bot.log.Info("telegram: the agent's access refused a message", "user_id", m.From.ID, "chat_id", m.Chat.ID, "why", ae.Why)
		if !in.Group() || in.Mentioned {
			g.refuseOnce(ctx, m.Chat.ID, m.From.ID, "Sorry, I cannot take this message here: "+ae.Why+".")
		}
		return ad, false, nil
	case retryable(err):
		return ad, false, err
	}
	g.bot.log.Error("telegram: no session for a chat", "chat_id", m.Chat.ID, "err", err)
	if !in.Group() || in.Mentioned {
		g.bot.say(ctx, m.Chat.ID, "Sorry, I cannot answer right now: "+err.Error()+".")
	}
	return ad, false, nil
}

// senderLabel names a group message's sender.
func senderLabel(u *User) string {
	return inbox.Label(strings.TrimSpace(u.FirstName+" "+u.LastName), u.Username, strconv.FormatInt(u.ID, 10))
}

// keep stores a group message the agent listens to without answering
// (passive or silent): its text or caption, prefixed with the sender,
// with the update's offset. It starts no turn, so no watcher; a failure
// is logged, not said in a chat that did not address the bot.
func (g *poller) keep(poll context.Context, u Update, m *Message, in agents.Inbound, sid string, how runtime.Keep) (bool, error) {
	text := m.Text
	if text == "" {
		text = m.Caption
	}
	if strings.TrimSpace(text) == "" {
		return false, nil
	}
	name := strings.TrimSpace(m.From.FirstName + " " + m.From.LastName)
	input := runtime.Input{Content: inbox.Text(in, senderLabel(m.From), text), SenderID: strconv.FormatInt(m.From.ID, 10),
		SenderName: name, Cursor: cursor(u), Keep: how}
	_, err := g.o.Loop.Send(poll, sid, input)
	switch {
	case err == nil:
		return true, nil
	case retryable(err):
		return false, err
	}
	g.bot.log.Error("telegram: cannot store a group message", "chat_id", m.Chat.ID, "session", sid, "err", err)
	return false, nil
}

// offer puts a message the agent answers through the chat's queue: at
// once to an idle chat, else it waits for the turn (or is dropped, or
// refused, per spec.access.groups.queue).
func (g *poller) offer(poll context.Context, u Update, m *Message, in agents.Inbound, ad inbox.Admission, content string) (bool, error) {
	text := inbox.Text(in, senderLabel(m.From), content)
	name := strings.TrimSpace(m.From.FirstName + " " + m.From.LastName)
	it := inbox.Item{Text: text, SenderID: strconv.FormatInt(m.From.ID, 10), SenderName: name, Ref: queued{sid: ad.Session, chat: m.Chat.ID}}
	switch v := g.queue.Offer(queueKey(m.Chat.ID), it, ad.Queue, g.sessionBusy(poll, ad.Session)); v {
	case inbox.Now:
		return g.sendUser(poll, u, m, ad.Session, text)
	case inbox.Rejected:
		if ad.Queue.RejectMessage != "" {
			g.bot.say(poll, m.Chat.ID, ad.Queue.RejectMessage)
		}
		fallthrough
	default:
		g.bot.log.Debug("telegram: message queued", "chat_id", m.Chat.ID, "verdict", v.String())
	}
	return false, nil
}
