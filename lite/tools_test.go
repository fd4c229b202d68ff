package lite

import (
	"context"
	"encoding/json"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// toolAgent writes an agent with the given spec.tools lines and loads it.
func toolAgent(t *testing.T, mode string, toolsYAML string, files map[string]string) *runtime.LoadedAgent {
	t.Helper()
	_, _, a := toolAgentCache(t, mode, toolsYAML, files)
	return a
}

// toolAgentCache is toolAgent that also returns the cache and config.
func toolAgentCache(t *testing.T, mode string, toolsYAML string, files map[string]string) (*agentcache.Cache, *config.Config, *runtime.LoadedAgent) {
	t.Helper()
	cfg := cachetest.Init(t)
	c := cacheOver(cfg, sandboxMode(mode))
	dir := filepath.Join(cfg.AgentsDir, "assistant")
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o755))
	}
	yaml := filepath.Join(dir, agents.FileName)
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	i := strings.Index(string(data), "  tools:")
	require.Positive(t, i)
	require.NoError(t, os.WriteFile(yaml, []byte(string(data[:i])+"  tools:\n"+toolsYAML), 0o644))
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	return c, cfg, a
}

// newTestCache is an agent cache over a new data dir (cachetest.Init),
// outside a daemon.
func newTestCache(t *testing.T) (*agentcache.Cache, *config.Config) {
	t.Helper()
	cfg := cachetest.Init(t)
	return cacheOver(cfg, nil), cfg
}

// cacheOver is an agent cache over cfg outside a daemon that compares the
// agents' files with the disk on every use; its tool factory is made with
// edit, when set, applied to its options: a factory takes everything at
// construction.
func cacheOver(cfg *config.Config, edit func(*toolset.Options)) *agentcache.Cache {
	log := slog.New(slog.DiscardHandler)
	o := agentcache.StandaloneTools(cfg, log)
	if edit != nil {
		edit(&o)
	}
	return agentcache.New(agentcache.Options{Config: cfg, Logger: log, Tools: toolset.New(o), Recheck: -1})
}

// withTools closes c and returns a cache over cfg whose tool factory is
// made with edit applied to its options.
func withTools(c *agentcache.Cache, cfg *config.Config, edit func(*toolset.Options)) *agentcache.Cache {
	c.Close()
	return cacheOver(cfg, edit)
}

// sandboxMode gives a tool factory a sandbox manager whose sandbox.mode
// is mode: a manager copies its section of the configuration when made,
// so the test makes another one in place of the default.
func sandboxMode(mode string) func(*toolset.Options) {
	return func(o *toolset.Options) {
		sc := o.Config.Sandbox
		sc.Mode = mode
		o.Sandboxes = sandbox.New(sandbox.Options{Config: sc, DataDir: o.Config.DataDir, Logger: o.Logger})
	}
}

func needSandbox(t *testing.T) {
	testenv.SkipIfNoReexec(t, "bwrap runs the re-executed test binary as the sandbox's init")
	if st := bwrap.Probe(context.Background()); !st.Usable {
		t.Skip("bubblewrap unusable here: " + st.Problem)
	}
}

func call(t *testing.T, a *runtime.LoadedAgent, name, args string) runtime.Result {
	t.Helper()
	for _, tool := range a.Tools {
		if tool.Spec().Name == name {
			res, err := tool.Run(context.Background(), []byte(args))
			require.NoError(t, err)
			return res
		}
	}
	t.Fatalf("agent has no tool %s", name)
	return runtime.Result{}
}

func TestTools_BashInTheSandbox(t *testing.T) {
	needSandbox(t)
	a := toolAgent(t, "bwrap", "    - {type: builtin, name: bash}\n    - {type: builtin, name: read_file}\n", nil)
	res := call(t, a, "bash", `{"command":"echo hi > made.txt; pwd; id -u; ls / | grep -c root; exit 2"}`)
	assert.True(t, res.IsError)
	uid := "1000" // in the sandbox's user namespace
	if os.Geteuid() == 0 {
		uid = "65534" // sandbox.run_as: nobody, the default for a root daemon
	}
	assert.Equal(t, "/workspace\n"+uid+"\n0\n[exit code 2]", res.Content)
	var details map[string]any
	require.NoError(t, json.Unmarshal(res.Details, &details))
	assert.EqualValues(t, 2, details["exit_code"])
	assert.Equal(t, "hi\n", call(t, a, "read_file", `{"path":"made.txt"}`).Content, "bash writes the same workspace the file tools read")

	res = call(t, a, "bash", `{"command":"sleep 5","timeout_seconds":1}`)
	assert.Contains(t, res.Content, "[timed out after 1s")
}

func TestTools_CLIToolJSONInput(t *testing.T) {
	needSandbox(t)
	a := toolAgent(t, "bwrap",
		"    - {type: cli, name: weather, command: ./tools/weather/run, input: json, description: Weather for a city., readme: ./tools/weather/README.md}\n",
		map[string]string{
			"tools/weather/run":       "#!/bin/sh\nread args\necho \"forecast for $args: sunny\"\nls /root 2>&1 | head -1\n",
			"tools/weather/README.md": "Pass {\"city\": NAME}.",
		})
	spec := a.Tools[0].Spec()
	assert.Equal(t, "Weather for a city.\n\nPass {\"city\": NAME}.", spec.Description)
	res := call(t, a, "weather", `{"city":"Oslo"}`)
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, `forecast for {"city":"Oslo"}: sunny`)
	assert.Contains(t, res.Content, "No such file or directory", "the CLI tool runs sandboxed")
}

func TestTools_BashRefusesWithoutSandbox(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no bwrap to be found
	a := toolAgent(t, "bwrap", "    - {type: builtin, name: bash}\n", nil)
	res := call(t, a, "bash", `{"command":"echo should not run"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "sudo apt-get install bubblewrap")
	assert.NotContains(t, res.Content, "should not run")
}

func TestTools_TrustMode(t *testing.T) {
	testenv.SkipIfNoReexec(t, "trust mode runs the re-executed test binary as the init that sets the limits")
	a := toolAgent(t, "trust", "    - {type: builtin, name: bash}\n", nil)
	res := call(t, a, "bash", `{"command":"pwd; echo $HOME"}`)
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, filepath.Join("workspaces", "assistant"))
}

func TestTools_UnknownBuiltin(t *testing.T) {
	c, cfg := newTestCache(t)
	yaml := filepath.Join(cfg.AgentsDir, "assistant", agents.FileName)
	data, _ := os.ReadFile(yaml)
	require.NoError(t, os.WriteFile(yaml, []byte(strings.Replace(string(data), "name: list_dir", "name: teleport", 1)), 0o644))
	_, err := c.LoadAgent("assistant")
	assert.ErrorContains(t, err, `there is no built-in tool "teleport"`)

	require.NoError(t, os.WriteFile(yaml, []byte(strings.Replace(string(data), "name: list_dir", "name: schedule", 1)), 0o644))
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err, "an Agnx built-in this build lacks is left out, not fatal")
	assert.Len(t, a.Tools, 1)
}

// A folder tools/<name> with a tool.yaml is a WASM tool of the agent
// without being listed in spec.tools.
func TestTools_WasmFromToolsFolder(t *testing.T) {
	c, cfg := newTestCache(t)
	cachetest.EchoTool(t, filepath.Join(cfg.AgentsDir, "assistant", "tools", "echo"))
	la, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	names := []string{}
	for _, tool := range la.Tools {
		names = append(names, tool.Spec().Name)
	}
	assert.Contains(t, names, "echo", "a tools/<name>/tool.yaml is found without being listed")
	const args = `{"from":"tools/echo"}`
	res := call(t, la, "echo", args)
	assert.False(t, res.IsError, res.Content)
	assert.Equal(t, args, res.Content, "the tool ran on the call's arguments")
	c.Close()
}
