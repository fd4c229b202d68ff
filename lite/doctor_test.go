package lite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

func checks(t *testing.T, cfg *Config) map[string]Check {
	out := map[string]Check{}
	for _, c := range Doctor(context.Background(), cfg) {
		out[c.Name] = c
	}
	return out
}

func TestDoctor(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	_, err := Init(cfg)
	require.NoError(t, err)

	got := checks(t, cfg)
	assert.Equal(t, "ok", got["data dir"].Status)
	assert.Equal(t, "ok", got["database"].Status)
	assert.Contains(t, got["database"].Detail, "created on first use")
	assert.Equal(t, "ok", got["agents"].Status)
	assert.Equal(t, "ok", got["ollama "+fake.BaseURL()].Status, got["ollama "+fake.BaseURL()].Detail)
	assert.Contains(t, []string{"ok", "fail"}, got["sandbox"].Status)
	for _, name := range []string{"wasm", "daemon", "telegram", "memory", "temperature", "service"} {
		assert.Contains(t, []string{"ok", "warn"}, got[name].Status, name)
		assert.NotEmpty(t, got[name].Detail, name)
	}
	assert.Contains(t, got["daemon"].Detail, "not running")

	app, err := Open(cfg, nil)
	require.NoError(t, err)
	require.NoError(t, app.Close())
	got = checks(t, cfg)
	assert.Equal(t, "ok", got["database"].Status)
	assert.Contains(t, got["database"].Detail, "consistent, 0 sessions")

	fake.Models = []string{"llama3.2:3b"}
	got = checks(t, cfg)
	c := got["ollama "+fake.BaseURL()]
	assert.Equal(t, "fail", c.Status)
	assert.Equal(t, "ollama pull qwen3:1.7b", c.Fix)

	cfg.Gateways.Telegram.Enabled = true
	assert.Equal(t, "fail", checks(t, cfg)["telegram"].Status, "enabled without a token")
	cfg.Gateways.Telegram.BotToken = "123:abc"
	assert.Equal(t, "warn", checks(t, cfg)["telegram"].Status, "no allowlist")
	cfg.Gateways.Telegram.Allowlist = []int64{7}
	assert.Equal(t, "ok", checks(t, cfg)["telegram"].Status)
	cfg.Gateways.Telegram = TelegramConfig{}

	cfg.Sandbox.Mode = "trust"
	assert.Equal(t, "warn", checks(t, cfg)["sandbox"].Status)

	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	c = checks(t, cfg)["ollama http://127.0.0.1:1"]
	assert.Equal(t, "fail", c.Status)
	assert.Contains(t, c.Fix, "ollama serve")

	require.NoError(t, os.WriteFile(filepath.Join(cfg.AgentsDir, "assistant", "agent.yaml"), []byte("kind: Agent\n"), 0o644))
	got = checks(t, cfg)
	assert.Equal(t, "fail", got["agent assistant"].Status)
}
