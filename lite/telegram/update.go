package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// handle handles one update. An error means it was not handled and must be
// fetched again (the runtime is busy or closing, the store failed); every
// other outcome moves the offset past it.
func (g *poller) handle(poll context.Context, u Update) error {
	var err error
	sent := false
	switch {
	case u.Message != nil:
		sent, err = g.onMessage(poll, u, u.Message)
	case u.CallbackQuery != nil:
		g.onCallback(poll, u.CallbackQuery)
	}
	if err != nil {
		return err
	}
	if sent {
		g.offset = u.UpdateID + 1 // committed with the message
		return nil
	}
	return g.commitOffset(u.UpdateID + 1)
}

// retryable errors leave an update for the next poll.
func retryable(err error) bool {
	return errors.Is(err, runtime.ErrBusy) || errors.Is(err, runtime.ErrClosed) || errors.Is(err, context.Canceled)
}

// onMessage admits a message and hands it to the chat's session. sent
// reports that a message (carrying the offset) was committed. The chat's
// agent's access is checked first, before commands and before a session
// is created; then the message's disposition says what it does.
func (g *poller) onMessage(poll context.Context, u Update, m *Message) (sent bool, err error) {
	if m.From == nil || m.From.IsBot {
		return false, nil
	}
	in := g.inbound(m)
	cmd, arg, isCmd := g.command(m.Text)
	if isCmd {
		in.Mentioned = true // a command is addressed to the bot
	}
	if !g.allowed(m.From.ID) {
		if !in.Group() || in.Mentioned {
			g.refuse(poll, m)
		}
		return false, nil
	}
	ad, ok, err := g.admit(poll, m, in, !isCmd)
	if !ok {
		return false, err
	}
	if isCmd {
		if ad.Disposition != agents.Reply {
			return false, nil // a member the agent does not answer has no commands
		}
		return false, g.runCommand(poll, m, in, cmd, arg)
	}
	switch ad.Disposition {
	case agents.Block:
		return false, nil
	case agents.Passive:
		return g.keep(poll, u, m, in, ad.Session, runtime.KeepPassive)
	case agents.Silent:
		return g.keep(poll, u, m, in, ad.Session, runtime.KeepSilent)
	}
	if m.Voice != nil || m.Audio != nil || m.VideoNote != nil {
		g.bot.say(poll, m.Chat.ID, "Voice messages are not supported yet: please type your message.")
		return false, nil
	}
	content, ok := g.content(poll, m, ad.Agent)
	if !ok {
		return false, nil
	}
	return g.offer(poll, u, m, in, ad, content)
}

// inbound describes a message for routing and access.
func (g *poller) inbound(m *Message) agents.Inbound {
	in := agents.Inbound{Gateway: GatewayName, ChatType: m.Chat.Type, ChatID: strconv.FormatInt(m.Chat.ID, 10)}
	if m.From != nil {
		in.SenderID = strconv.FormatInt(m.From.ID, 10)
	}
	in.Mentioned = g.mentioned(m)
	return in
}

// mentioned reports whether a message mentions the bot (@username, or a
// text mention of its id) or replies to one of its messages.
func (g *poller) mentioned(m *Message) bool {
	if m.ReplyTo != nil && m.ReplyTo.From != nil && g.me.ID != 0 && m.ReplyTo.From.ID == g.me.ID {
		return true
	}
	text, ents := m.Text, m.Entities
	if text == "" {
		text, ents = m.Caption, m.CaptionEntities
	}
	u16 := utf16.Encode([]rune(text))
	for _, e := range ents {
		if e.Type == "text_mention" && e.User != nil && e.User.ID == g.me.ID && g.me.ID != 0 {
			return true
		}
		if e.Type != "mention" || e.Offset < 0 || e.Length < 0 || e.Offset+e.Length > len(u16) {
			continue
		}
		name := string(utf16.Decode(u16[e.Offset : e.Offset+e.Length]))
		if g.me.Username != "" && strings.EqualFold(name, "@"+g.me.Username) {
			return true
		}
	}
	return false
}

func (g *poller) allowed(user int64) bool { return slices.Contains(g.o.Allowlist, user) }

// refuse answers a stranger once per RefuseEvery, and nothing else.
func (g *poller) refuse(ctx context.Context, m *Message) {
	id := m.From.ID
	if len(g.o.Allowlist) == 0 {
		g.bot.logLimited("noallow"+strconv.FormatInt(id, 10), slog.LevelWarn, "telegram: no allowlist is configured, so the bot answers nobody; "+
			"to let this user in, add to agnx.yaml: gateways.telegram.allowlist: ["+strconv.FormatInt(id, 10)+"]",
			"user_id", id, "username", m.From.Username)
		g.refuseOnce(ctx, m.Chat.ID, id, fmt.Sprintf("This bot does not answer anyone yet. Your Telegram user id is %d. "+
			"To talk to it, its owner adds that id to agnx.yaml (gateways.telegram.allowlist: [%d]) and restarts agnx-lite.", id, id))
		return
	}
	g.bot.log.Info("telegram: refused a user who is not on the allowlist", "user_id", id, "username", m.From.Username, "chat_id", m.Chat.ID)
	g.refuseOnce(ctx, m.Chat.ID, id, "Sorry, this is a private bot: it only talks to the people its owner allowed.")
}

// maxRefused bounds the refusal memory.
const maxRefused = 1024

// refuseOnce says text unless user was told something within RefuseEvery.
func (g *poller) refuseOnce(ctx context.Context, chat, user int64, text string) {
	now := time.Now()
	if last, ok := g.refused[user]; ok && now.Sub(last) < g.o.RefuseEvery {
		return
	}
	if len(g.refused) >= maxRefused {
		for k, t := range g.refused {
			if now.Sub(t) >= g.o.RefuseEvery || len(g.refused) >= maxRefused {
				delete(g.refused, k)
			}
		}
	}
	g.refused[user] = now
	g.bot.say(ctx, chat, text)
}

// sendUser commits the message with the update's offset, with the
// session's watcher held from before it (so the turn's replies are owed
// to this chat and its first tokens stream) to after it.
func (g *poller) sendUser(poll context.Context, u Update, m *Message, sid, content string) (bool, error) {
	name := strings.TrimSpace(m.From.FirstName + " " + m.From.LastName)
	in := runtime.Input{Content: content, SenderID: strconv.FormatInt(m.From.ID, 10), SenderName: name, Cursor: cursor(u)}
	w, err := g.out.hold(poll, sid, m.Chat.ID)
	if err != nil {
		if retryable(err) {
			return false, err
		}
		g.bot.log.Error("telegram: cannot write the outbox", "chat_id", m.Chat.ID, "session", sid, "err", err)
		g.bot.say(poll, m.Chat.ID, "Sorry, I could not store your message ("+err.Error()+"): please send it again.")
		return false, nil
	}
	if g.o.BeforeSend != nil {
		g.o.BeforeSend(u.UpdateID)
	}
	_, err = g.o.Loop.Send(poll, sid, in)
	g.out.release(w, sid, m.Chat.ID, err == nil)
	switch {
	case err == nil:
		return true, nil
	case retryable(err), errors.Is(err, runtime.ErrSessionNotFound):
		// Gone since it was looked up (a first turn that failed
		// unanswered is removed): the next poll starts a new one.
		return false, err
	}
	g.bot.log.Error("telegram: cannot store a message", "chat_id", m.Chat.ID, "session", sid, "err", err)
	if errors.Is(err, runtime.ErrSessionEnded) {
		g.bot.say(poll, m.Chat.ID, "This conversation has ended: send /new to start another.")
		return false, nil
	}
	g.bot.say(poll, m.Chat.ID, "Sorry, I could not store your message ("+err.Error()+"): please send it again.")
	return false, nil
}
