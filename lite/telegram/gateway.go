package telegram

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/inbox"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// GatewayName names this gateway in routes, sessions and access lists
// ("telegram:12345").
const GatewayName = "telegram"

// Chats is the chat → session map (lite/chats.Chats). Session returns an
// *agents.AccessError when the agent's access refuses the message; Current
// returns ErrNoChat for a chat without a session. KV and PutKV hold the
// gateway's own state (the offset, the outbox); PutKV joins the loop's
// group commit.
type Chats interface {
	// Admit applies the chat's agent's spec.access before anything else
	// (a refusal is an *agents.AccessError); with create, an admitted
	// message that is not blocked gets a session when the chat has none.
	Admit(ctx context.Context, in agents.Inbound, create bool) (inbox.Admission, error)
	Session(ctx context.Context, in agents.Inbound) (sid, agent string, err error)
	NewSession(ctx context.Context, in agents.Inbound, agent string) (string, error)
	Current(gateway, chatID string) (sid, agent string, err error)
	KV(key string) ([]byte, error)
	PutKV(key string, val []byte) error
}

// Agents tells the gateway about agents.
type Agents interface {
	// Agent loads an agent: its workspace (where files sent to it go) and
	// model, for /status.
	Agent(name string) (AgentInfo, error)
	// Admit applies the agent's spec.access to a message: nil, or an
	// *agents.AccessError.
	Admit(name string, in agents.Inbound) error
}

// AgentInfo is what the gateway needs of an agent.
type AgentInfo struct {
	Workspace string
	Model     string
}

// ErrNoChat is Chats.Current's answer for a chat without a session.
var ErrNoChat = errors.New("this chat has no session yet")

// Options configure a Gateway. Zero durations mean the defaults.
type Options struct {
	Token   string // the bot token, from BotFather
	BaseURL string // the Bot API; "" means DefaultBaseURL
	// Allowlist holds the Telegram user ids that may talk to the bot.
	// Empty: nobody may; the bot tells each sender their id and how to
	// add it.
	Allowlist []int64
	// Loop is the runtime: messages go in through it, sessions and their
	// events are read and followed through it.
	Loop   *runtime.Loop
	Chats  Chats
	Agents Agents
	Logger *slog.Logger
	// HTTPClient makes the Bot API calls; nil: a plain client (each call
	// has its own deadline).
	HTTPClient *http.Client
	// PollTimeout is getUpdates' long-poll timeout (30 s); a poll that has
	// not answered PollGrace (10 s) later is abandoned and restarted.
	PollTimeout, PollGrace time.Duration
	// CallTimeout bounds every other call (30 s).
	CallTimeout time.Duration
	// EditInterval spaces the edits that stream a reply (1 s): Telegram
	// allows about one message a second per chat.
	EditInterval time.Duration
	// TypingInterval is how often "typing…" is renewed (4 s; it shows 5).
	TypingInterval time.Duration
	// RefuseEvery is how often a stranger is told no (1 h).
	RefuseEvery time.Duration
	// MaxFileBytes caps a downloaded photo or document (20 MB, the Bot
	// API's own limit).
	MaxFileBytes int64
	// Sleep waits for backoffs and retry_after; tests replace it. It
	// returns ctx.Err() when ctx ends first.
	Sleep func(ctx context.Context, d time.Duration) error
	// BeforeSend, a test seam, runs after an update is received and
	// before its message is committed (the crash tests stop there).
	BeforeSend func(updateID int64)
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.PollTimeout, 30*time.Second)
	def(&o.PollGrace, 10*time.Second)
	def(&o.CallTimeout, 30*time.Second)
	def(&o.EditInterval, time.Second)
	def(&o.TypingInterval, 4*time.Second)
	def(&o.RefuseEvery, time.Hour)
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 20 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Gateway is a Telegram bot, made of three parts: the poller (one
// goroutine: it fetches updates and handles them in order, commands
// included), the outbox (one goroutine owning the watchers: one per
// session that has a reply to deliver or a turn running, so idle chats
// cost nothing) and the bot (the Bot API calls all of them make).
type Gateway struct {
	o    Options
	bot  *bot
	poll *poller
	out  *outbox

	mu      sync.Mutex // guards the life cycle below
	started bool
	running bool
	cancel  context.CancelFunc // stops the poller
	done    chan struct{}      // closed when the poller has returned
}

// New checks the options and returns a gateway; Start runs it.
func New(o Options) (*Gateway, error) {
	if o.Token == "" {
		return nil, errors.New("telegram: the bot token is empty (set gateways.telegram.bot_token, e.g. ${TELEGRAM_BOT_TOKEN})")
	}
	if o.Loop == nil || o.Chats == nil || o.Agents == nil {
		return nil, errors.New("telegram: Loop, Chats and Agents are required")
	}
	o.defaults()
	b := newBot(&o)
	out := newOutbox(&o, b)
	return &Gateway{o: o, bot: b, out: out, poll: newPoller(&o, b, out)}, nil
}

// Start has a watcher deliver what each session still owes its chat,
// begins polling in the background and returns; the bot keeps trying
// while the network or Telegram is away. ctx bounds nothing after
// Start returns: only Stop ends the gateway. A gateway starts once.
func (g *Gateway) Start(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started {
		return errors.New("telegram: the gateway was started already; make a new one to start again")
	}
	g.started, g.running = true, true
	base := context.WithoutCancel(ctx)
	g.out.start(base)
	poll, cancel := context.WithCancel(base)
	g.poll.base = poll
	g.cancel, g.done = cancel, make(chan struct{})
	go func() {
		defer close(g.done)
		g.poll.run(poll)
	}()
	return nil
}

// Stop stops polling at once, lets the replies being delivered finish
// until ctx ends (what is left then is delivered from the outbox at the
// next start, and Stop says so), and returns when every goroutine of the
// gateway is gone. Stopping a gateway that is not running does nothing.
func (g *Gateway) Stop(ctx context.Context) error {
	g.mu.Lock()
	running := g.running
	g.running = false
	g.mu.Unlock()
	if !running {
		return nil
	}
	g.cancel()
	<-g.done
	g.poll.stopQueue()
	return g.out.stop(ctx)
}

// LastPoll is when getUpdates last answered (zero before the first time):
// for doctor and /metrics.
func (g *Gateway) LastPoll() time.Time { return g.poll.lastPollTime() }

// Deliver sends text to chat as the agent's replies are sent: formatted
// (Markdown as Telegram HTML, plain text if Telegram refuses it) and split
// at 4,096 characters. It returns once Telegram has every part. It is for
// messages nobody asked for in that turn; the caller checks that the chat
// is one the gateway serves.
func (g *Gateway) Deliver(ctx context.Context, chat int64, text string) error {
	g.mu.Lock()
	running := g.running
	g.mu.Unlock()
	if !running {
		return errors.New("telegram: the gateway is not running; start it first")
	}
	parts := Split(text, MaxMessage)
	if len(parts) == 0 {
		return errors.New("telegram: the message is empty; give it some text")
	}
	for _, p := range parts {
		if _, err := g.bot.post(ctx, Text{ChatID: chat, Text: HTML(p), ParseMode: "HTML"}, p); err != nil {
			return err
		}
	}
	return nil
}
