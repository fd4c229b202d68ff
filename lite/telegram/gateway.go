package telegram

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// GatewayName names this gateway in routes, sessions and access lists
// ("telegram:12345").
const GatewayName = "telegram"

// Chats is the chat → session map (lite.Chats). Session returns an
// *agents.AccessError when the agent's access refuses the message; Current
// returns ErrNoChat for a chat without a session.
type Chats interface {
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
	Loop      *runtime.Loop
	Store     *storage.Store
	Chats     Chats
	Agents    Agents
	Logger    *slog.Logger
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

// Gateway is a running Telegram bot. One goroutine polls and handles
// updates in order; each session with a running turn has one more, which
// streams the reply and delivers it. Idle chats cost no goroutine.
type Gateway struct {
	o   Options
	api *Client
	log *slog.Logger

	lastPoll atomic.Int64 // unix nanoseconds of the last answered poll

	// Owned by the poll goroutine.
	me     User
	offset int64

	mu       sync.Mutex
	watchers map[string]*watcher // by session id
	refused  map[int64]time.Time // last refusal per user
	keys     approvalKeys

	stopPoll context.CancelFunc
	stopAll  context.CancelFunc
	pollDone chan struct{}
	wg       sync.WaitGroup // watchers
	logMu    sync.Mutex
	lastLog  map[string]time.Time

	// beforeSend, set by tests, runs after an update is received and
	// before its message is committed (crash tests stop there).
	beforeSend func(updateID int64)
}

// New checks the options and returns a gateway; Start runs it.
func New(o Options) (*Gateway, error) {
	if o.Token == "" {
		return nil, errors.New("telegram: the bot token is empty (set gateways.telegram.bot_token, e.g. ${TELEGRAM_BOT_TOKEN})")
	}
	if o.Loop == nil || o.Store == nil || o.Chats == nil || o.Agents == nil {
		return nil, errors.New("telegram: Loop, Store, Chats and Agents are required")
	}
	o.defaults()
	return &Gateway{o: o, api: NewClient(o.BaseURL, o.Token, o.HTTPClient), log: o.Logger.With("gateway", GatewayName),
		watchers: map[string]*watcher{}, refused: map[int64]time.Time{}, lastLog: map[string]time.Time{}}, nil
}

// Start begins polling in the background; the bot keeps trying while the
// network or Telegram is away. Stop ends it.
func (g *Gateway) Start(ctx context.Context) {
	all, stopAll := context.WithCancel(ctx)
	poll, stopPoll := context.WithCancel(all)
	g.stopAll, g.stopPoll = stopAll, stopPoll
	g.pollDone = make(chan struct{})
	go func() {
		defer close(g.pollDone)
		g.run(poll, all)
	}()
}

// Stop stops polling at once, lets replies that are being streamed finish
// until ctx ends (a turn still running then is delivered from the outbox
// at the next start), and returns when every goroutine is gone. A nil
// gateway (Telegram disabled) stops at once.
func (g *Gateway) Stop(ctx context.Context) {
	if g == nil || g.stopAll == nil {
		return
	}
	g.stopPoll()
	<-g.pollDone
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	g.stopAll()
	<-done
}

// LastPoll is when getUpdates last answered (zero before the first time):
// for doctor and /metrics. A nil gateway returns zero.
func (g *Gateway) LastPoll() time.Time {
	if g == nil {
		return time.Time{}
	}
	if n := g.lastPoll.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// call gives a Bot API call its deadline.
func (g *Gateway) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, g.o.CallTimeout)
}

// logLimited logs at most once a minute per key: errors that repeat in a
// loop (the network is down) must not flood the journal.
func (g *Gateway) logLimited(key string, level slog.Level, msg string, args ...any) {
	g.logMu.Lock()
	now := time.Now()
	if now.Sub(g.lastLog[key]) < time.Minute {
		g.logMu.Unlock()
		return
	}
	if len(g.lastLog) >= maxRefused {
		for k, t := range g.lastLog {
			if now.Sub(t) >= time.Minute {
				delete(g.lastLog, k)
			}
		}
	}
	g.lastLog[key] = now
	g.logMu.Unlock()
	g.log.Log(context.Background(), level, msg, args...)
}
