package lite

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/plugin"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// gateways.external starts the example plugin with its env (secrets that
// never reach the log), and its chat reaches the default agent.
func TestStartPlugins_Example(t *testing.T) {
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
	_, err = Init(cfg)
	require.NoError(t, err)
	in, answers := filepath.Join(dir, "in.txt"), filepath.Join(dir, "answers.jsonl")
	require.NoError(t, os.WriteFile(in, []byte("ping?\n"), 0o600))
	cfg.Gateways.External = []ExternalGateway{{Name: "script", Command: bin, Restart: "on_failure",
		Env: map[string]Secret{"AGNX_EXAMPLE_INPUT": Secret(in), "AGNX_EXAMPLE_OUTPUT": Secret(answers),
			"AGNX_EXAMPLE_EXIT_AFTER": "1", "SOME_TOKEN": "tok-3141592"}}}
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()

	var logs syncBuffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	stopped := make(chan struct{})
	stop, err := startPlugins(context.Background(), app, log, plugin.Timing{}, func(name string, s plugin.Status) {
		if name == "script" && s.State == plugin.StateStopped {
			close(stopped)
		}
	})
	require.NoError(t, err)
	defer stop()
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
}

func TestStartPlugins_BadRestart(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	_, err := Init(cfg)
	require.NoError(t, err)
	cfg.Gateways.External = []ExternalGateway{{Name: "a", Command: "true", Restart: "sometimes"}}
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	_, err = StartPlugins(context.Background(), app, nil)
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
