package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/inbox"
	"github.com/agnx-lite/agnx-lite/lite/plugin"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// examplePlugin is the example plugin, built by TestMain; "" when no Go
// toolchain is at hand.
var examplePlugin, noToolchain string

func TestMain(m *testing.M) {
	if kind := os.Getenv(helperEnv); kind != "" {
		os.Exit(runHelper(kind))
	}
	dir, err := os.MkdirTemp("", "agnx-plugin-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		goBin, err := exec.LookPath("go")
		if err != nil {
			noToolchain = "no go toolchain on PATH to build the example plugin"
			return m.Run()
		}
		examplePlugin = filepath.Join(dir, "example-plugin")
		cmd := exec.Command(goBin, "build", "-o", examplePlugin, "./example")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build the example plugin: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// env is a real App (template agent, fake Ollama echoing) to plug into.
type env struct {
	llm    *llmtest.Server
	app    *lite.App
	cfg    *config.Config
	states chan plugin.Status
	// onState, when set, is called with each state change before it is
	// queued, on the Gateway's goroutine: a test may hold the supervisor
	// there (in backoff, say) until it is ready for the plugin to return.
	onState func(plugin.Status)
}

func newEnv(t *testing.T) *env { return newEnvWith(t, llmtest.Echo()) }

// newEnvWith answers the model's requests with h.
func newEnvWith(t *testing.T, h llmtest.Handler) *env {
	t.Helper()
	fake := llmtest.NewHandler(t, llmtest.Ollama, h)
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.AgentsDir = filepath.Join(cfg.DataDir, "agents")
	// No memory guard: it samples the resident set of the whole test
	// binary (every test's App, and the race detector's shadow memory),
	// which is over the 40 MB budget under -race, and would refuse turns.
	cfg.Runtime.MemoryLimitMB = 0
	_, err := config.Init(cfg)
	require.NoError(t, err)
	e := &env{llm: fake, cfg: cfg, states: make(chan plugin.Status, 1024)}
	e.reopen(t)
	t.Cleanup(func() { e.app.Close() })
	return e
}

// reopen closes the App, if open, and opens it again: a daemon restart.
func (e *env) reopen(t *testing.T) {
	t.Helper()
	if e.app != nil {
		require.NoError(t, e.app.Close())
	}
	app, err := lite.Open(e.cfg, nil)
	require.NoError(t, err)
	e.app = app
	for len(e.states) > 0 {
		<-e.states // the last App's
	}
}

// sessions adapts the App's chats as package lite does.
type sessions struct{ c *chats.Chats }

func (s sessions) Session(ctx context.Context, in agents.Inbound) (string, error) {
	sid, _, err := s.c.Session(ctx, in)
	var ae *agents.AccessError
	if errors.As(err, &ae) {
		return "", ae
	}
	return sid, err
}

func (s sessions) Admit(ctx context.Context, in agents.Inbound, create bool) (inbox.Admission, error) {
	return s.c.Admit(ctx, in, create)
}

func (s sessions) NewSession(ctx context.Context, in agents.Inbound, agent string) (string, error) {
	return s.c.NewSession(ctx, in, agent)
}

// fast are timings that keep the tests quick.
var fast = plugin.Timing{
	ReadyTimeout: 5 * time.Second, BackoffBase: 20 * time.Millisecond, BackoffMax: 160 * time.Millisecond,
	StopGrace: 2 * time.Second, TypingInterval: time.Hour, PingInterval: time.Hour,
}

// start runs a plugin: the example when command is "", else the helper
// of that kind. Extra env is KEY=value.
func (e *env) start(t *testing.T, kind, restart string, timing plugin.Timing, extra ...string) *plugin.Gateway {
	t.Helper()
	if kind != "" {
		testenv.SkipIfNoReexec(t, "the helper plugin is the re-executed test binary")
	}
	o := plugin.Options{
		Name: "helper", Command: os.Args[0], Env: append([]string{helperEnv + "=" + kind}, extra...),
		Restart: restart, Sessions: sessions{e.app.Chats()}, Runtime: e.app.Loop, Timing: timing, Logger: testLog(),
		Observe: func(s plugin.Status) {
			if e.onState != nil {
				e.onState(s)
			}
			select {
			case e.states <- s:
			default:
			}
		},
	}
	if kind == "" {
		if examplePlugin == "" {
			t.Skip(noToolchain)
		}
		o.Name, o.Command, o.Env = "example", examplePlugin, extra
	}
	g, err := plugin.Start(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Stop(context.Background()) })
	return g
}

// next returns the next state change of kind want, failing after 10 s.
func (e *env) next(t *testing.T, want plugin.State) plugin.Status {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case s := <-e.states:
			if s.State == want {
				return s
			}
		case <-timeout:
			t.Fatalf("no %s state within 10 s", want)
		}
	}
}

func waitDone(t *testing.T, g *plugin.Gateway) {
	t.Helper()
	select {
	case <-g.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway did not stop within 10 s")
	}
}

// converse checks the runtime still serves a session of its own.
func (e *env) converse(t *testing.T, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := e.app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant", Gateway: "test"})
	require.NoError(t, err)
	sub, err := e.app.Loop.Follow(ctx, info.ID, runtime.Live)
	require.NoError(t, err)
	defer sub.Close()
	_, err = e.app.Loop.Send(ctx, info.ID, runtime.Input{Content: msg})
	require.NoError(t, err)
	var answer string
	for {
		select {
		case ev := <-sub.C():
			if ev.Type == runtime.EvAssistant {
				answer = ev.Content
			}
			if ev.Type == runtime.EvTurnEnd {
				assert.Equal(t, "echo: "+msg, answer)
				return
			}
		case <-ctx.Done():
			t.Fatal("the runtime did not answer within 10 s")
		}
	}
}

func testLog() *slog.Logger {
	if os.Getenv("AGNX_TEST_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
