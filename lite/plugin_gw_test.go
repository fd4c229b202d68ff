package lite

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/plugin"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// gateways.external starts the example plugin with its env (secrets that
// never reach the log), and its chat reaches the default agent.
func TestPluginGateways_Example(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH to build the example plugin")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "example-plugin")
	build := exec.Command(goBin, "build", "-o", bin, "./plugin/example")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(filepath.Join(dir, "data"))
	cfg.Runtime.MemoryLimitMB = 0 // no guard: the test binary's resident set (under -race) is no daemon's
	_, err = config.Init(cfg)
	require.NoError(t, err)
	in, answers := filepath.Join(dir, "in.txt"), filepath.Join(dir, "answers.jsonl")
	require.NoError(t, os.WriteFile(in, []byte("ping?\n"), 0o600))
	cfg.Gateways.External = []config.ExternalGateway{{Name: "script", Command: bin, Restart: "on_failure",
		Env: map[string]config.Secret{"AGNX_EXAMPLE_INPUT": config.Secret(in), "AGNX_EXAMPLE_OUTPUT": config.Secret(answers),
			"AGNX_EXAMPLE_EXIT_AFTER": "1", "SOME_TOKEN": "tok-3141592"}}}
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()

	var logs syncBuffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	stopped := make(chan struct{})
	gws, err := pluginGateways(app, log, plugin.Timing{}, func(name string, s plugin.Status) {
		if name == "script" && s.State == plugin.StateStopped {
			close(stopped)
		}
	})
	require.NoError(t, err)
	started, err := gatewaySet(gws).start(context.Background(), log)
	require.NoError(t, err)
	defer started.stop(context.Background(), log)
	select {
	case <-stopped: // it exits 0 after its one answer
	case <-time.After(time.Minute): // a bound for a loaded machine, not a wait
		t.Fatal("the example plugin did not finish within a minute")
	}
	data, err := os.ReadFile(answers)
	require.NoError(t, err)
	assert.JSONEq(t, `{"chat_id":"example-chat","content":"echo: ping?"}`, string(data))
	assert.Contains(t, logs.String(), `"plugin":"script"`)
	assert.NotContains(t, logs.String(), "tok-3141592")
	assert.Equal(t, map[string]string{"script": "stopped"}, app.GatewayStates(), "serve status shows the plugin's state")
}

// What a plugin reports of itself becomes one sentence for serve status.
// A pairing code or QR code is a secret (whoever holds it pairs with the
// platform) and the status is an API answer: it names the log, which has
// them, and never carries them.
func TestPluginStates_Record(t *testing.T) {
	var p pluginStates
	p.record("wa", plugin.Status{State: plugin.StateStarted, Run: 1})
	p.record("wa", plugin.Status{State: plugin.StateAuthRequired, Auth: &plugin.AuthMethod{Method: plugin.AuthPairCode, Code: "WXYZ-0042", ExpiresIn: 60}})
	assert.Equal(t, "waiting to be paired with its platform: enter the code shown in the daemon's log (valid 60 s)", p.m["wa"])
	assert.NotContains(t, p.m["wa"], "WXYZ-0042")
	p.record("wa", plugin.Status{State: plugin.StateAuthRequired, Auth: &plugin.AuthMethod{Method: plugin.AuthQRCode,
		QRData: "2@pairing-secret", QRASCII: "##  ##", ExpiresIn: 20}})
	assert.Equal(t, "waiting to be paired with its platform: scan the QR code in the daemon's log (valid 20 s)", p.m["wa"])
	assert.NotContains(t, p.m["wa"], "pairing-secret")
	p.record("wa", plugin.Status{State: plugin.StateDropped})
	assert.Contains(t, p.m["wa"], "QR code", "a dropped command is not a state")
	p.record("wa", plugin.Status{State: plugin.StateAuthenticated})
	assert.Equal(t, "paired", p.m["wa"])
	p.record("wa", plugin.Status{State: plugin.StateBackoff, Err: errors.New("exit status 3")})
	assert.Equal(t, "backoff: exit status 3", p.m["wa"])
}

func TestPluginGateways_BadRestart(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	cfg.Gateways.External = []config.ExternalGateway{{Name: "a", Command: "true", Restart: "sometimes"}}
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	_, err = buildGateways(app, nil)
	assert.ErrorContains(t, err, "sometimes")
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

// Deliver reaches a chat that has a session through the plugin, refuses
// one that has none (ErrNotServed), and says so when the plugin is down
// (restarting, then stopped), sending nothing.
func TestPluginGateway_Deliver(t *testing.T) {
	testenv.SkipIfNoReexec(t, "the plugin is the re-executed test binary")
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	dir := t.TempDir()
	cfg := crashConfig(filepath.Join(dir, "data"))
	cfg.Runtime.MemoryLimitMB = 0 // no guard: the test binary's resident set (under -race) is no daemon's
	_, err := config.Init(cfg)
	require.NoError(t, err)
	pdir := filepath.Join(dir, "plugin")
	require.NoError(t, os.Mkdir(pdir, 0o700))
	cfg.Gateways.External = []config.ExternalGateway{{Name: "script", Command: os.Args[0], Restart: "on_failure",
		Env: map[string]config.Secret{scriptPluginEnv: "1", "AGNX_SCRIPT_DIR": config.Secret(pdir)}}}
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _, err = app.Chats().Session(ctx, agents.Inbound{Gateway: "script", ChatType: "private", ChatID: "c1", SenderID: "u1"})
	require.NoError(t, err)

	states := make(chan plugin.Status, 16)
	// The restart waits a minute: the plugin stays down while Deliver is tried.
	gws, err := pluginGateways(app, nil, plugin.Timing{BackoffBase: time.Minute, BackoffMax: time.Minute},
		func(_ string, s plugin.Status) { states <- s })
	require.NoError(t, err)
	require.Len(t, gws, 1)
	gw := gws[0]
	assert.Equal(t, "script", gw.Name())
	require.NoError(t, gw.Start(ctx))
	stopped := false
	defer func() {
		if !stopped {
			assert.NoError(t, gw.Stop(ctx))
		}
	}()
	next := func(want plugin.State) plugin.Status {
		t.Helper()
		for {
			if s := recv(t, states, string(want)); s.State == want {
				return s
			}
		}
	}
	first := next(plugin.StateStarted)
	next(plugin.StateReady)

	require.NoError(t, gw.Deliver(ctx, Outbound{ChatID: "c1", Text: "a reminder"}))
	assert.Equal(t, []string{"a reminder"}, readRecords(filepath.Join(pdir, "out")), "acknowledged: the plugin has it")
	assert.ErrorIs(t, gw.Deliver(ctx, Outbound{ChatID: "c2", Text: "hello?"}), ErrNotServed)

	require.NoError(t, syscall.Kill(first.PID, syscall.SIGKILL))
	next(plugin.StateBackoff)
	assert.ErrorContains(t, gw.Deliver(ctx, Outbound{ChatID: "c1", Text: "while restarting"}), "is not running")
	require.NoError(t, gw.Stop(ctx))
	stopped = true
	assert.ErrorContains(t, gw.Deliver(ctx, Outbound{ChatID: "c1", Text: "once stopped"}), "is stopped")
	assert.Equal(t, []string{"a reminder"}, readRecords(filepath.Join(pdir, "out")), "nothing queued while it was down")
}
