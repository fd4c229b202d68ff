package plugin

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Sessions maps a chat to its session: the one it has, or a new one with
// the agent the routes choose. A message the agent's access rules refuse
// is a *agents.AccessError.
type Sessions interface {
	Session(ctx context.Context, in agents.Inbound) (sid string, err error)
}

// Runtime is what a gateway needs of the runtime loop.
type Runtime interface {
	Send(ctx context.Context, sid string, in runtime.Input) (runtime.Sent, error)
	Subscribe(ctx context.Context, sid string) (*runtime.Subscription, error)
	Approve(ctx context.Context, sid, callID, decision string) error
	Session(ctx context.Context, sid string) (runtime.SessionInfo, error)
}

var _ Runtime = (*runtime.Loop)(nil)

// Sentences a plugin's users may see.
const (
	sayOnlyText   = "Only text messages are supported here: please write your message as text."
	sayNotHandled = "Sorry, that message could not be handled; the agnx-lite log says why."
	sayTurnFailed = "Sorry, the agent could not answer that; the agnx-lite log says why."
)

// refusalEvery bounds how often one chat is told it is refused.
const refusalEvery = time.Minute

// caps are the capabilities the plugin listed in its ready.
type caps struct{ typing, keyboard, reply bool }

func capsOf(list []string) caps {
	var c caps
	for _, s := range list {
		switch s {
		case CapTyping:
			c.typing = true
		case CapInlineKeyboard:
			c.keyboard = true
		case CapReply:
			c.reply = true
		}
	}
	return c
}

// bridge turns a plugin's messages into user messages and the turns'
// outcomes into commands. Only the Gateway's goroutine touches it (the
// limiter excepted).
type bridge struct {
	name     string
	sessions Sessions
	rt       Runtime
	t        Timing
	log      *slog.Logger
	observe  func(Status)
	limit    *limiter // lines a plugin can make us repeat
	p        *proc    // the running process; nil between runs
	caps     caps
	watchers
	ledger
}

func newBridge(o Options, t Timing) *bridge {
	return &bridge{
		name: o.Name, sessions: o.Sessions, rt: o.Runtime, t: t, log: o.Logger, observe: o.Observe,
		limit:    newLimiter(10, 10*time.Second),
		watchers: watchers{m: map[string]*watch{}, events: make(chan watchEvent, 64)},
		ledger:   ledger{approvals: map[string]approval{}, requests: map[string]request{}, refused: map[string]time.Time{}},
	}
}

func (b *bridge) attach(p *proc) { b.p, b.caps = p, caps{} }
func (b *bridge) detach()        { b.p = nil }

// command queues c for the plugin; when the plugin is down or does not
// read, c is dropped and logged (rate-limited).
func (b *bridge) command(c Command) {
	switch {
	case b.p == nil:
		b.limit.log(b.log, slog.LevelWarn, "plugin gateway is not running; command dropped", "plugin", b.name, "command", c.CommandType())
	case !b.p.send(c):
		b.limit.log(b.log, slog.LevelWarn, "plugin gateway does not read its stdin; command dropped", "plugin", b.name, "command", c.CommandType())
		b.observe(Status{State: StateDropped, PID: b.p.pid()})
	}
}

// say sends text to a chat and tracks the request.
func (b *bridge) say(chat, replyTo, text string, kb *InlineKeyboard) {
	if !b.caps.reply {
		replyTo = ""
	}
	id := b.nextID()
	b.track(id, "send_message", chat)
	b.command(SendMessage{RequestID: id, ChatID: chat, Content: text, ReplyTo: replyTo, InlineKeyboard: kb})
}

func (b *bridge) nextID() string {
	b.seq++
	return "r" + strconv.FormatUint(b.seq, 10)
}

func chatType(t string) string {
	if t == "" || t == "dm" {
		return "private"
	}
	return t
}

func (b *bridge) onMessage(ctx context.Context, m MessageReceived) {
	ctx, cancel := context.WithTimeout(ctx, b.t.CallTimeout)
	defer cancel()
	in := agents.Inbound{Gateway: b.name, ChatType: chatType(m.Routing.ChatType), ChatID: string(m.ChatID),
		SenderID: string(m.Sender.ID), Mentioned: m.MentionsBot || m.ReplyToBot}
	sid, err := b.sessions.Session(ctx, in)
	b.log.Log(ctx, slog.LevelDebug, "plugin message", "plugin", b.name, "chat", in.ChatID, "session", sid, "err", err)
	if err != nil {
		b.refuse(in, err)
		return
	}
	msgID := string(m.MessageID)
	if m.Content.Type != "text" {
		b.say(in.ChatID, msgID, sayOnlyText, nil)
		return
	}
	text := strings.TrimSpace(m.Content.Text)
	if text == "" {
		return
	}
	if a, ok := parseApproval(text); ok {
		b.say(in.ChatID, msgID, b.approve(ctx, sid, in.ChatID, a), nil)
		return
	}
	if err := b.deliver(ctx, sid, in, msgID, runtime.Input{Content: text, SenderID: in.SenderID, SenderName: m.Sender.Name()}); err != nil {
		b.log.Error("plugin message not delivered to its session", "plugin", b.name, "session", sid, "err", err)
		b.say(in.ChatID, msgID, sayNotHandled, nil)
		return
	}
	if b.caps.typing {
		b.command(SendTyping{ChatID: in.ChatID, Duration: 5})
	}
}

// deliver sends a user message to the session, watching it first so that
// no event of the turn is missed.
func (b *bridge) deliver(ctx context.Context, sid string, in agents.Inbound, msgID string, input runtime.Input) error {
	w, err := b.watch(ctx, sid, in)
	if err != nil {
		return err
	}
	sent, err := b.rt.Send(ctx, sid, input)
	if err != nil {
		if !b.running(ctx, sid) {
			delete(b.m, sid) // no turn_end will come to end the watch
			w.cancel()
		}
		return err
	}
	w.lastSent, w.replyTo = max(w.lastSent, sent.Seq), msgID
	return nil
}

// refuse answers a message that reached no session: the refusal
// sentence (once a minute per chat; never to a group that did not
// address the bot), or a sentence pointing at the log.
func (b *bridge) refuse(in agents.Inbound, err error) {
	var r *agents.AccessError
	if !errors.As(err, &r) {
		b.log.Error("plugin message has no session", "plugin", b.name, "chat", in.ChatID, "err", err)
		b.say(in.ChatID, "", sayNotHandled, nil)
		return
	}
	if in.Group() && !in.Mentioned {
		return
	}
	now := time.Now()
	if last, ok := b.refused[in.ChatID]; ok && now.Sub(last) < refusalEvery {
		return
	}
	if len(b.refused) >= 256 {
		for k, t := range b.refused {
			if now.Sub(t) >= refusalEvery {
				delete(b.refused, k)
			}
		}
	}
	b.refused[in.ChatID] = now
	b.say(in.ChatID, "", r.Why, nil)
}

// typing renews the typing indicator of the chats whose turn runs.
func (b *bridge) typing() {
	if !b.caps.typing {
		return
	}
	for _, w := range b.m {
		b.command(SendTyping{ChatID: w.chat, Duration: 5})
	}
}
