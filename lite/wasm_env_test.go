package lite

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/wasmtools/wattest"
)

// A WASM tool's manifest picks its env: from what the operator put in
// sandbox.env and the daemon's TZ, LANG and LC_ALL, never from the rest
// of the daemon's environment, whatever a secret there is called.
func TestEnviron_OnlyWhatTheOperatorNames(t *testing.T) {
	daemon := map[string]string{"OPENAI_API_KEY": "x", "DATABASE_URL": "postgres://u:pw@h/db",
		"GLOSSARY_PATH": "/srv/glossary", "TZ": "Europe/Paris", "LANG": "de_DE.UTF-8", "HOME": "/root"}
	lookup := func(k string) (string, bool) { v, ok := daemon[k]; return v, ok }
	env := environ(map[string]config.Secret{"WEATHER_URL": "https://weather.example", "LANG": "C.UTF-8"}, lookup)
	assert.Equal(t, map[string]string{"WEATHER_URL": "https://weather.example", "LANG": "C.UTF-8", "TZ": "Europe/Paris"}, env,
		"the operator's variables (first) and the harmless ones, nothing else")
	assert.Empty(t, environ(nil, func(string) (string, bool) { return "", false }))
}

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
	c := newAgentCache(cfg, slog.New(slog.DiscardHandler))
	t.Cleanup(c.close)
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
