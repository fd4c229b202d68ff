package plugin

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/inbox"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Sessions maps a chat to its session: the one it has, or a new one with
// the agent the routes choose. A message the agent's access rules refuse
// is a *agents.AccessError.
type Sessions interface {
	Session(ctx context.Context, in agents.Inbound) (sid string, err error)
	// Admit applies the chat's agent's spec.access before anything else;
	// with create, an admitted message that is not blocked gets a session
	// when the chat has none (lite/chats.Chats.Admit).
	Admit(ctx context.Context, in agents.Inbound, create bool) (inbox.Admission, error)
	// NewSession starts a fresh session of agent for the chat (/reset).
	NewSession(ctx context.Context, in agents.Inbound, agent string) (string, error)
}

// Runtime is what a gateway needs of the runtime loop: its messages, its
// approvals, following sessions, and its outbox positions in kv.
type Runtime interface {
	Send(ctx context.Context, sid string, in runtime.Input) (runtime.Sent, error)
	Follow(ctx context.Context, sid string, after uint64) (*runtime.Subscription, error)
	Approve(ctx context.Context, sid, callID, decision string) error
	Session(ctx context.Context, sid string) (runtime.SessionInfo, error)
	Sessions(ctx context.Context) ([]runtime.SessionInfo, error)
	Events(ctx context.Context, sid string, after uint64, fn func(runtime.Event) error) error
	KV(ctx context.Context, key string) ([]byte, error)
	PutKV(ctx context.Context, key string, val []byte) error
	Compact(ctx context.Context, sid string) (runtime.CompactResult, error)
	DiscardUnanswered(ctx context.Context, sid string) (bool, error)
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
	outbound chan outbound // Deliver's messages
	follows  chan followReq
	queue    *inbox.Inbox // messages waiting for their chat's turn
	queued   chan []inbox.Item
	quit     <-chan struct{} // closed when the Gateway ends
	limit    *limiter        // lines a plugin can make us repeat
	p        *proc           // the running process; nil between runs
	ready    bool            // p said ready
	stopping bool            // Stop began: no watcher starts
	caps     caps
	watchers
	ledger
}

func newBridge(o Options, t Timing) *bridge {
	return &bridge{
		name: o.Name, sessions: o.Sessions, rt: o.Runtime, t: t, log: o.Logger, observe: o.Observe,
		limit:    newLimiter(10, 10*time.Second),
		watchers: watchers{open: map[string]*outbox{}, outgoing: map[string]*outbox{}, events: make(chan watchEvent, 64)},
		ledger: ledger{approvals: map[string]approval{}, requests: map[string]request{}, refused: map[string]time.Time{},
			waiting: map[string]chan<- error{}},
		outbound: make(chan outbound),
		follows:  make(chan followReq, followQueue),
		queued:   make(chan []inbox.Item),
	}
}

func (b *bridge) attach(p *proc) { b.p, b.caps, b.ready = p, caps{}, false }

// detach forgets the process that ended: the watchers stop (what the
// chats are owed waits in the log), and Deliver's callers waiting for an
// acknowledgement are told it will not come.
func (b *bridge) detach() {
	b.p, b.ready = nil, false
	b.pause()
	b.abandon(errGone)
}

// onReady resumes the chats the plugin owes replies to.
func (b *bridge) onReady(ctx context.Context, list []string) {
	b.ready, b.caps = true, capsOf(list)
	if !b.stopping {
		b.resume(ctx)
	}
}

// command queues c for the plugin; when the plugin is down or does not
// read, c is dropped and logged (rate-limited), and false is returned.
func (b *bridge) command(c Command) bool {
	switch {
	case b.p == nil:
		b.limit.log(b.log, slog.LevelWarn, "plugin gateway is not running; command dropped", "plugin", b.name, "command", c.CommandType())
	case !b.p.send(c):
		b.limit.log(b.log, slog.LevelWarn, "plugin gateway does not read its stdin; command dropped", "plugin", b.name, "command", c.CommandType())
		b.observe(Status{State: StateDropped, PID: b.p.pid()})
	default:
		return true
	}
	return false
}

// say sends text to a chat, tracks the request and returns its id, and
// whether it was queued (false: dropped, the plugin does not read).
func (b *bridge) say(chat, replyTo, text string, kb *InlineKeyboard) (id string, queued bool) {
	if !b.caps.reply {
		replyTo = ""
	}
	id = b.nextID()
	b.track(id, "send_message", chat)
	return id, b.command(SendMessage{RequestID: id, ChatID: chat, Content: text, ReplyTo: replyTo, InlineKeyboard: kb})
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

// onMessage checks the chat's agent's access first (before /reset,
// /status and before a session is created), then does what the
// message's disposition says: drop it, keep it (passive or silent), or
// put it through the chat's queue to the agent.
func (b *bridge) onMessage(ctx context.Context, m MessageReceived) {
	ctx, cancel := context.WithTimeout(ctx, b.t.CallTimeout)
	defer cancel()
	in := agents.Inbound{Gateway: b.name, Channel: m.Routing.Channel, ChatType: chatType(m.Routing.ChatType), ChatID: string(m.ChatID),
		SenderID: string(m.Sender.ID), Mentioned: m.MentionsBot || m.ReplyToBot}
	text := strings.TrimSpace(m.Content.Text)
	if m.Content.Type == "media" {
		text = strings.TrimSpace(m.Content.Caption)
	}
	cmd := coreCommand(text)
	ad, err := b.sessions.Admit(ctx, in, cmd == "")
	b.log.Log(ctx, slog.LevelDebug, "plugin message", "plugin", b.name, "chat", in.ChatID, "session", ad.Session,
		"disposition", ad.Disposition.String(), "err", err)
	if err != nil {
		b.refuse(in, err)
		return
	}
	msgID := string(m.MessageID)
	switch {
	case ad.Disposition == agents.Block:
		return
	case cmd != "":
		if ad.Disposition == agents.Reply {
			b.say(in.ChatID, msgID, b.runCommand(ctx, cmd, in, ad), nil)
		}
		return
	case ad.Disposition != agents.Reply:
		b.keep(ctx, in, m, ad, text)
		return
	case m.Content.Type != "text":
		b.say(in.ChatID, msgID, sayOnlyText, nil)
		return
	case text == "":
		return
	}
	if a, ok := parseApproval(text); ok {
		b.say(in.ChatID, msgID, b.approve(ctx, ad.Session, in.ChatID, a), nil)
		return
	}
	it := inbox.Item{Text: inbox.Text(in, m.Sender.Name(), text), SenderID: in.SenderID, SenderName: m.Sender.Name(),
		Ref: queuedRef{sid: ad.Session, in: in, msgID: msgID}}
	switch v := b.queue.Offer(b.queueKey(in.ChatID), it, ad.Queue, b.busy(ctx, ad.Session)); v {
	case inbox.Now:
		b.send(ctx, it)
	case inbox.Rejected:
		if ad.Queue.RejectMessage != "" {
			b.say(in.ChatID, msgID, ad.Queue.RejectMessage, nil)
		}
		fallthrough
	default:
		b.log.Debug("plugin message queued", "plugin", b.name, "chat", in.ChatID, "verdict", v.String())
	}
}

// send hands a message (or a queue's joined messages) to its session.
func (b *bridge) send(ctx context.Context, it inbox.Item) {
	q, ok := it.Ref.(queuedRef)
	if !ok {
		return
	}
	input := runtime.Input{Content: it.Text, SenderID: it.SenderID, SenderName: it.SenderName}
	err := b.deliver(ctx, q.sid, q.in, q.msgID, input)
	if errors.Is(err, runtime.ErrSessionNotFound) {
		// Removed since it was looked up (a first turn that failed
		// unanswered is): the chat gets a new session.
		if q.sid, err = b.sessions.Session(ctx, q.in); err == nil {
			err = b.deliver(ctx, q.sid, q.in, q.msgID, input)
		}
	}
	if err != nil {
		b.log.Error("plugin message not delivered to its session", "plugin", b.name, "session", q.sid, "err", err)
		b.say(q.in.ChatID, q.msgID, sayNotHandled, nil)
		return
	}
	if b.caps.typing {
		b.command(SendTyping{ChatID: q.in.ChatID, Duration: 5})
	}
}

// deliver sends a user message to the session; the chat follows the
// session from before it (a session it did not follow yet has its
// outbox opened in the message's own transaction), so no reply is
// missed, whenever the plugin is up.
func (b *bridge) deliver(ctx context.Context, sid string, in agents.Inbound, msgID string, input runtime.Input) error {
	o, cursor, err := b.begin(ctx, sid, in.ChatID, in.ChatType)
	if err != nil {
		return err
	}
	input.Cursor = cursor
	if _, err := b.rt.Send(ctx, sid, input); err != nil {
		return err
	}
	if cursor != nil {
		b.open[sid] = o
		if b.ready && !b.stopping {
			b.follow(ctx, o)
		}
	}
	o.rec.ChatType, o.replyTo = in.ChatType, msgID
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
	for _, o := range b.open {
		if o.w != nil {
			b.command(SendTyping{ChatID: o.rec.Chat, Duration: 5})
		}
	}
}
