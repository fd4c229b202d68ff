package lite

import (
	"context"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// Admission reads an agent's spec; it never builds the agent. While chat
// 43's agent is being built (its provider held, as a long WASM compile
// would hold it), the poller goes on, and chat 42's agent answers. Before,
// admission built the agent on the poller's goroutine, and every chat
// waited for the build.
func TestTelegram_AdmissionDoesNotWaitForABuild(t *testing.T) {
	tg := tgtest.New(t)
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	_, err := config.Init(cfg)
	require.NoError(t, err)
	copyAgent(t, cfg, "assistant", "slow", "slow-model")
	cfg.Routes = []config.Route{{Match: config.RouteMatch{ChatID: "43"}, Agent: "slow"}, {Agent: "assistant"}}
	cfg.Gateways.Telegram = config.Telegram{Enabled: true, BotToken: tgtest.Token, Allowlist: []int64{42, 43}, APIBaseURL: tg.URL}
	building, release := make(chan struct{}, 1), make(chan struct{})
	next := agentcache.NewProvider
	slow := func(m agents.Model) (runtime.Provider, error) {
		if m.Name == "slow-model" {
			select {
			case building <- struct{}{}:
			default: // a later build: only the first is signalled
			}
			<-release
		}
		return next(m)
	}
	app, err := Open(cfg, &Options{NoSync: true, agents: func(o *agentcache.Options) { o.NewProvider = slow }})
	require.NoError(t, err)
	defer app.Close()
	gw, err := NewTelegram(app, telegram.Options{PollTimeout: time.Second})
	require.NoError(t, err)
	log := slog.New(slog.DiscardHandler)
	started, err := gatewaySet{gw}.start(context.Background(), log)
	require.NoError(t, err)
	app.gateways.set(started)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		started.stop(ctx, log)
	}()
	defer func() { // first: a build still held would hold the gateway's stop
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	tg.Queue(tgtest.Private(43, "first"))
	select {
	case <-building:
	case <-time.After(10 * time.Second):
		t.Fatal("chat 43's agent was never built")
	}
	tg.Queue(tgtest.Private(42, "second"))
	tg.Wait(t, "chat 42's answer while chat 43's agent builds", func() bool {
		return slices.Contains(tg.Texts(42), "echo: second")
	})
	assert.NotContains(t, tg.Texts(43), "echo: first", "chat 43's agent is still being built")

	close(release)
	tg.Wait(t, "chat 43's answer once its agent is built", func() bool {
		return slices.Contains(tg.Texts(43), "echo: first")
	})
}

// copyAgent makes agent to, a copy of agent from with its own name and
// model name.
func copyAgent(t *testing.T, cfg *config.Config, from, to, model string) {
	t.Helper()
	src, dst := filepath.Join(cfg.AgentsDir, from), filepath.Join(cfg.AgentsDir, to)
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	yaml := filepath.Join(dst, agents.FileName)
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	spec, err := agents.Load(src)
	require.NoError(t, err)
	out := strings.Replace(string(data), "name: "+from, "name: "+to, 1)
	out = strings.Replace(out, spec.Model.Name, model, 1)
	require.NoError(t, os.WriteFile(yaml, []byte(out), 0o600))
}
