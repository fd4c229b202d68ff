package doctor

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

func checks(t *testing.T, cfg *config.Config) map[string]Check {
	out := map[string]Check{}
	for _, c := range Run(context.Background(), cfg) {
		out[c.Name] = c
	}
	return out
}

func TestDoctor(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := testConfig(t.TempDir())
	_, err := config.Init(cfg)
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

	st, err := storage.Open(cfg.DBPath(), nil) // as a daemon leaves it
	require.NoError(t, err)
	require.NoError(t, st.Close())
	got = checks(t, cfg)
	assert.Equal(t, "ok", got["database"].Status)
	assert.Contains(t, got["database"].Detail, "consistent, 0 sessions")

	fake.Models = []string{"llama3.2:3b"}
	got = checks(t, cfg)
	c := got["ollama "+fake.BaseURL()]
	assert.Equal(t, "fail", c.Status)
	assert.Equal(t, "ollama pull qwen3:1.7b (or, from here: agnx-lite model pull qwen3:1.7b)", c.Fix)

	cfg.Gateways.Telegram.Enabled = true
	assert.Equal(t, "fail", checks(t, cfg)["telegram"].Status, "enabled without a token")
	cfg.Gateways.Telegram.BotToken = "123:abc"
	assert.Equal(t, "warn", checks(t, cfg)["telegram"].Status, "no allowlist")
	cfg.Gateways.Telegram.Allowlist = []int64{7}
	assert.Equal(t, "ok", checks(t, cfg)["telegram"].Status)
	cfg.Gateways.Telegram = config.Telegram{}

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

// doctor lists an agent's warnings, and those of the shared directives;
// an Ollama base_url in Agnx's form (ending in /v1) is probed at its root.
func TestDoctor_AgentWarnings(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	cfg := testConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	yaml := filepath.Join(cfg.AgentsDir, "assistant", "agent.yaml")
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	data = []byte(strings.Replace(string(data), "  instructions: ./INSTRUCTIONS.md\n", "  instructions: ./MISSING.md\n", 1))
	data = []byte(strings.Replace(string(data), "    name: qwen3:1.7b", "    name: qwen3:1.7b\n    base_url: "+fake.BaseURL()+"/v1", 1))
	require.NoError(t, os.WriteFile(yaml, data, 0o644))
	shared := filepath.Join(cfg.DataDir, "directives")
	require.NoError(t, os.MkdirAll(shared, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "huge.md"), []byte(strings.Repeat("x", 20<<10)), 0o644))

	got := checks(t, cfg)
	assert.Equal(t, "warn", got["agent assistant"].Status)
	assert.Contains(t, got["agent assistant"].Detail, "spec.instructions names ./MISSING.md, which does not exist")
	assert.Equal(t, "warn", got["directives"].Status)
	assert.Contains(t, got["directives"].Detail, "huge.md: directive left out")
	assert.Equal(t, "ok", got["agents"].Status)
	assert.Equal(t, "ok", got["ollama "+fake.BaseURL()].Status, got["ollama "+fake.BaseURL()].Detail)
}

// An Ollama behind a proxy with a password: the check still logs in, and
// neither its name nor its detail (both shown by GET /api/v1/health)
// carries the credentials.
func TestOllamaCheck_CredentialsHidden(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "tok-user" || p != "pa55-s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, `{"models":[{"name":"m:latest"}]}`)
	}))
	defer srv.Close()
	base := strings.Replace(srv.URL, "http://", "http://tok-user:pa55-s3cret@", 1)
	c := ollamaCheck(context.Background(), base, []string{"m"})
	assert.Equal(t, "ok", c.Status, c.Detail)
	assert.Equal(t, "ollama "+strings.Replace(srv.URL, "http://", "http://xxxxx@", 1), c.Name)

	srv.Close() // now unreachable: the error names the URL
	for _, b := range []string{base, strings.Replace(srv.URL, "http://", "http://tok-user@", 1)} {
		c = ollamaCheck(context.Background(), b, []string{"m"})
		assert.Equal(t, "fail", c.Status)
		for _, secret := range []string{"tok-user", "pa55-s3cret"} {
			assert.NotContains(t, c.Name+c.Detail+c.Fix, secret)
		}
	}
}

// doctor shows each config warning as a warn line of the config section.
func TestDoctor_ConfigWarnings(t *testing.T) {
	c, err := config.Parse("duragent.yaml", []byte("world_memory:\n  path: m\nflavour: x\nservices:\n  session:\n    path: s\n"))
	require.NoError(t, err)
	checks := configChecks(c)
	require.Len(t, checks, 3, "world_memory.path is honoured: no warning")
	assert.Equal(t, Check{Name: "config", Status: "ok", Detail: "duragent.yaml is valid"}, checks[0])
	assert.Equal(t, "warn", checks[1].Status)
	assert.Equal(t, `duragent.yaml:3: unknown field "flavour" (ignored)`, checks[1].Detail)
	assert.Contains(t, checks[2].Detail, "duragent.yaml:6: services.session.path is accepted")
}

// A missing duragent.yaml given with -c means the defaults, as in Agnx:
// doctor shows the warning that says so, never that the file is valid.
func TestDoctor_MissingDuragent(t *testing.T) {
	t.Setenv(config.EnvDataDir, "")
	missing := filepath.Join(t.TempDir(), "sub", "duragent.yaml")
	c, err := config.Locate(missing, "")
	require.NoError(t, err)
	require.Len(t, c.Warnings, 1)
	assert.Equal(t, []Check{{Name: "config", Status: "warn", Detail: c.Warnings[0],
		Fix: "remove or correct the key, or leave it if the file is shared with Agnx"}}, configChecks(c))
}

// doctor says which helper network: true will use.
func TestDoctor_NetworkHelper(t *testing.T) {
	needSandbox(t)
	cfg := testConfig(t.TempDir())
	for helper, want := range map[string]string{"auto": "slirp4netns", "slirp4netns": "slirp4netns", "pasta": "pasta"} {
		if _, err := exec.LookPath(want); err != nil {
			continue
		}
		cfg.Sandbox.NetworkHelper = helper
		c := sandboxCheck(context.Background(), cfg)
		assert.Equal(t, "ok", c.Status, c.Detail)
		assert.Regexp(t, "network: true through /[^ ]*/"+want+` \(sandbox.network_helper: `+helper+`\)`, c.Detail)
	}
}
