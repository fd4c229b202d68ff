package lite

import (
	"fmt"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/wasmtools/wattest"
)

// The same through a real WASM tool that prints its environment: its
// manifest names the daemon's OPENAI_API_KEY and DATABASE_URL and gets
// neither, while a variable of sandbox.env gets through and a name
// offered by no one is simply absent.
func TestTools_WasmEnvOnlyFromSandboxEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-daemon-secret")
	t.Setenv("DATABASE_URL", "postgres://u:daemon-pw@h/db")
	t.Setenv("TZ", "Europe/Paris")
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	cfg.Sandbox.Env = map[string]config.Secret{"GLOSSARY": "/srv/glossary"}
	c := agentcache.NewStandalone(cfg, slog.New(slog.DiscardHandler))
	t.Cleanup(c.Close)
	dir := filepath.Join(cfg.AgentsDir, "assistant", "tools", "printenv")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tool.yaml"), []byte("name: printenv\ndescription: prints its environment\n"+
		"module: printenv.wasm\nenv: [OPENAI_API_KEY, DATABASE_URL, GLOSSARY, TZ, NOT_SET_ANYWHERE]\n"+
		"limits: {timeout: 10m}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "printenv.wasm"), wattest.Testtool(t), 0o644))
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	res := call(t, a, "printenv", `{"mode":"env"}`)
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "GLOSSARY=/srv/glossary", "what sandbox.env sets gets through")
	assert.Contains(t, res.Content, "TZ=Europe/Paris")
	for _, leak := range []string{"sk-daemon-secret", "daemon-pw", "OPENAI_API_KEY", "DATABASE_URL", "NOT_SET_ANYWHERE"} {
		assert.NotContains(t, res.Content, leak)
	}
	assert.NotContains(t, fmt.Sprint(cfg.Sandbox), "/srv/glossary", "sandbox.env values print as secrets")
}
