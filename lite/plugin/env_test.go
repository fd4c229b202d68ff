package plugin_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agnx-lite/agnx-lite/lite/plugin"
	"github.com/stretchr/testify/assert"
)

// A plugin gets its own declared environment and PATH, HOME and LANG,
// never the daemon's secrets.
func TestGateway_PluginEnvHasNoDaemonSecret(t *testing.T) {
	e := newEnv(t)
	t.Setenv("AGNX_TEST_OPENAI_API_KEY", "sk-daemon-secret-for-no-plugin")
	t.Setenv("HOME", "/home/agnx-test")
	out := filepath.Join(t.TempDir(), "out")
	e.start(t, "env", plugin.RestartAlways, fast, "AGNX_HELPER_OUT="+out, "PLUGIN_TOKEN=its-own")
	e.next(t, plugin.StateReady)
	got := readLines(out)
	all := strings.Join(got, "\n")
	assert.NotContains(t, all, "sk-daemon-secret-for-no-plugin")
	assert.Contains(t, got, "PLUGIN_TOKEN=its-own", "its declared environment")
	assert.Contains(t, got, "HOME=/home/agnx-test")
	names := make([]string, 0, len(got))
	for _, kv := range got {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	assert.ElementsMatch(t, []string{"PATH", "HOME", "LANG", "AGNX_PLUGIN_HELPER", "AGNX_HELPER_OUT", "PLUGIN_TOKEN"}, names)
}
