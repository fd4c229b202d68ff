package telegram_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// owner is the allow-listed user of the tests; their private chat has the
// same id.
const owner = 42

// rig is a real lite.App with the Telegram gateway, talking to a fake Bot
// API and a fake Ollama.
type rig struct {
	t   *testing.T
	tg  *tgtest.Server
	llm *llmtest.Server
	cfg *config.Config
	app *lite.App
	gw  *lite.TelegramGateway
	log *syncBuffer

	mu     sync.Mutex
	sleeps []time.Duration
}

type rigOpt func(*config.Config, *telegram.Options)

func withAllowlist(ids ...int64) rigOpt {
	return func(c *config.Config, _ *telegram.Options) { c.Gateways.Telegram.Allowlist = ids }
}

func newRig(t *testing.T, h llmtest.Handler, opts ...rigOpt) *rig {
	if h == nil {
		h = llmtest.Echo()
	}
	r := &rig{t: t, tg: tgtest.New(t), llm: llmtest.NewHandler(t, llmtest.Ollama, h), log: &syncBuffer{}}
	t.Setenv("OLLAMA_HOST", r.llm.BaseURL())
	r.cfg = testConfig(t.TempDir(), r.tg.URL)
	_, err := config.Init(r.cfg)
	require.NoError(t, err)
	o := telegram.Options{PollTimeout: time.Second, PollGrace: 300 * time.Millisecond, Sleep: r.sleep,
		Logger: slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, opt := range opts {
		opt(r.cfg, &o)
	}
	r.app, err = lite.Open(r.cfg, &lite.Options{NoSync: true})
	require.NoError(t, err)
	r.gw, err = lite.NewTelegram(r.app, o)
	require.NoError(t, err)
	require.NoError(t, r.gw.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, r.gw.Stop(ctx), "every reply was delivered before the stop")
		require.NoError(t, r.app.Close())
	})
	return r
}

func testConfig(dir, tgURL string) *config.Config {
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.AgentsDir = filepath.Join(dir, "agents")
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Gateways.Telegram = config.Telegram{Enabled: true, BotToken: tgtest.Token, Allowlist: []int64{owner}, APIBaseURL: tgURL}
	return cfg
}

// sleep is the gateway's Sleep: it records the wait and returns at once.
func (r *rig) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.sleeps = append(r.sleeps, d)
	r.mu.Unlock()
	return ctx.Err()
}

func (r *rig) slept() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.sleeps...)
}

// say queues a private message from the owner.
func (r *rig) say(text string) int64 { return r.tg.Queue(tgtest.Private(owner, text)) }

// waitText waits until chat shows a message whose text is want.
func (r *rig) waitText(chat int64, want string) tgtest.Message {
	r.t.Helper()
	var got tgtest.Message
	r.tg.Wait(r.t, "the message "+want, func() bool {
		for _, m := range r.tg.Chat(chat) {
			if m.Plain() == want {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// waitContains waits for a message containing part and returns it.
func (r *rig) waitContains(chat int64, part string) tgtest.Message {
	r.t.Helper()
	var got tgtest.Message
	r.tg.Wait(r.t, "a message with "+part, func() bool {
		for _, m := range r.tg.Chat(chat) {
			if strings.Contains(m.Plain(), part) {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// waitConsumed waits until Telegram holds no update (the offset moved past
// all of them).
func (r *rig) waitConsumed() {
	r.t.Helper()
	r.tg.Wait(r.t, "the updates to be confirmed", func() bool { return r.tg.Pending() == 0 })
}

// waitIdle waits until no turn runs in the chat's session.
func (r *rig) waitIdle(chat string) {
	r.t.Helper()
	r.tg.Wait(r.t, "the turn to end", func() bool {
		sid, _, err := r.app.Chats().Current(telegram.GatewayName, chat)
		if err != nil {
			return false
		}
		info, err := r.app.Loop.Session(context.Background(), sid)
		return err == nil && info.Status == runtime.SessionActive
	})
}

// userMessages lists the user messages of the chat's current session.
func (r *rig) userMessages(chat string) []string {
	sid, _, err := r.app.Chats().Current(telegram.GatewayName, chat)
	if err != nil {
		return nil
	}
	var out []string
	require.NoError(r.t, r.app.Loop.Events(context.Background(), sid, 0, func(e runtime.Event) error {
		if e.Type == runtime.EvUserMessage {
			out = append(out, e.Content)
		}
		return nil
	}))
	return out
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}
