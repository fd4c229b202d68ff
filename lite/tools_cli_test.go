package lite

import (
	"encoding/json"
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// argsScript prints each of its arguments in brackets, then its folder.
const argsScript = "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\npwd\n"

func toolNames(a *runtime.LoadedAgent) []string {
	var names []string
	for _, t := range a.Tools {
		names = append(names, t.Spec().Name)
	}
	return names
}

func TestCLI_ArgsAreWordsNotShell(t *testing.T) {
	needSandbox(t)
	_, cfg, a := toolAgentCache(t, "bwrap", "    - {type: cli, name: show, command: ./bin/show}\n",
		map[string]string{"bin/show": argsScript})
	dir := filepath.Join(cfg.AgentsDir, "assistant")
	spec := a.Tools[0].Spec()
	assert.Equal(t, "CLI tool: show", spec.Description)
	assert.JSONEq(t, `{"type":"object","properties":{"args":{"type":"string","description":"Command line arguments to pass to the tool"}}}`, string(spec.Schema))

	res := call(t, a, "show", `{"args":"one \"two words\" 'it''s' ; rm -rf / $(id) > x"}`)
	assert.False(t, res.IsError, res.Content)
	assert.Equal(t, "[one]\n[two words]\n[its]\n[;]\n[rm]\n[-rf]\n[/]\n[$(id)]\n[>]\n[x]\n"+dir+"\n", res.Content,
		"args are split into words and given to the program, no shell reads them; it runs in the agent's folder")

	res = call(t, a, "show", `{"args":"'; rm -rf /'"}`)
	assert.Equal(t, "[; rm -rf /]\n"+dir+"\n", res.Content)

	res = call(t, a, "show", `not json`)
	assert.Equal(t, dir+"\n", res.Content, "arguments that cannot be read run the tool without any, as Agnx does")

	res = call(t, a, "show", `{"args":"'unclosed"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "unclosed ' quote")
}

func TestCLI_OutputFormatAndExitCode(t *testing.T) {
	needSandbox(t)
	a := toolAgent(t, "bwrap", "    - {type: cli, name: both, command: ./both.sh, description: Prints.}\n"+
		"    - {type: cli, name: quiet, command: ./quiet.sh}\n",
		map[string]string{"both.sh": "#!/bin/sh\necho out\necho err >&2\nexit 3\n", "quiet.sh": "#!/bin/sh\nexit 0\n"})
	res := call(t, a, "both", `{}`)
	assert.True(t, res.IsError)
	assert.Equal(t, "out\n\n--- stderr ---\nerr\n[exit code 3]", res.Content)
	res = call(t, a, "quiet", `{}`)
	assert.False(t, res.IsError)
	assert.Equal(t, "Command completed with exit code 0", res.Content)
}

func TestCLI_TimeoutKillsTheGroup(t *testing.T) {
	needSandbox(t)
	// The tool and its background child hold the read end of a FIFO in the
	// workspace. Once every process holding it is gone, opening its write
	// end without blocking fails with ENXIO: a child that outlived the
	// kill would keep it open for 300 s.
	_, cfg, a := toolAgentCache(t, "bwrap", "    - {type: cli, name: slow, command: ./slow.sh, timeout_seconds: 1}\n",
		map[string]string{"slow.sh": "#!/bin/sh\nexec 3</workspace/gate\n(sleep 300 <&3) &\nsleep 300\n"})
	gate := filepath.Join(cfg.WorkspaceDir("assistant"), "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o666))
	require.NoError(t, os.Chmod(gate, 0o666)) // past the umask: the sandbox runs as another user
	// Held read-write, so that the tool's open for reading does not wait.
	held, err := os.OpenFile(gate, os.O_RDWR, 0)
	require.NoError(t, err)
	start := time.Now()
	res := call(t, a, "slow", `{}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "[timed out after 1s")
	assert.Less(t, time.Since(start), 30*time.Second)
	require.NoError(t, held.Close())
	readers := func() bool {
		f, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			f.Close()
			return true
		}
		require.ErrorIs(t, err, syscall.ENXIO)
		return false
	}
	// The group is killed before the call returns; its processes close
	// their descriptors as the kernel reaps them.
	assert.Eventually(t, func() bool { return !readers() }, 10*time.Second, 10*time.Millisecond,
		"the tool's background child was killed with it")
}

func TestCLI_CommandForms(t *testing.T) {
	needSandbox(t)
	a := toolAgent(t, "bwrap", "    - {type: cli, name: abs, command: /bin/echo fixed}\n"+
		"    - {type: cli, name: bare, command: echo}\n", nil)
	assert.Equal(t, "fixed a b\n", call(t, a, "abs", `{"args":"a b"}`).Content, "an absolute command runs, with its fixed arguments")
	assert.Equal(t, "x\n", call(t, a, "bare", `{"args":"x"}`).Content, "a bare name is found on the sandbox's PATH")

	c, cfg := newTestCache(t)
	yaml := filepath.Join(cfg.AgentsDir, "assistant", "agent.yaml")
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	i := strings.Index(string(data), "  tools:")
	require.NoError(t, os.WriteFile(yaml, []byte(string(data[:i])+"  tools:\n    - {type: cli, name: x, command: /no/such/tool}\n"), 0o644))
	la, err := c.LoadAgent("assistant")
	require.NoError(t, err, "a missing program leaves the tool out, as Agnx loads such an agent")
	assert.Contains(t, strings.Join(la.Spec.Warnings, "\n"), `cli tool "x": /no/such/tool does not exist`)
	for _, tool := range la.Tools {
		assert.NotEqual(t, "x", tool.Spec().Name)
	}
	require.NoError(t, os.WriteFile(yaml, []byte(string(data[:i])+"  tools:\n    - {type: cli, name: x, command: ./a/../../x.sh}\n"), 0o644))
	assert.ErrorContains(t, c.Reload("assistant"), "outside")
}

func TestDiscover_PrecedenceRunAndRescan(t *testing.T) {
	needSandbox(t)
	c, cfg, a := toolAgentCache(t, "bwrap",
		"    - {type: builtin, name: reload_tools}\n    - {type: cli, name: decl, command: ./decl.sh, description: Declared.}\n",
		map[string]string{
			"decl.sh":               "#!/bin/sh\necho declared\n",
			"tools/decl/run":        "#!/bin/sh\necho discovered\n",
			"tools/greet/run.sh":    argsScript,
			"tools/greet/README.md": "Greets.",
			"tools/bad name/run":    "#!/bin/sh\n",
			"tools/norun/README.md": "no run file",
		})
	ws := cfg.DataDir // Agnx's {workspace}/tools: shared by every agent
	for name, content := range map[string]string{"tools/greet/run": "#!/bin/sh\necho shared greet\n", "tools/ws/run": argsScript} {
		p := filepath.Join(ws, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o755))
	}
	// The agent's file workspace is the model's: a tool folder there is
	// never a tool.
	planted := filepath.Join(cfg.WorkspaceDir("assistant"), "tools", "planted", "run")
	require.NoError(t, os.MkdirAll(filepath.Dir(planted), 0o755))
	require.NoError(t, os.WriteFile(planted, []byte("#!/bin/sh\necho planted\n"), 0o755))
	_, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	a, err = c.LoadAgent("assistant") // the shared tools/ appeared: rebuilt
	require.NoError(t, err)
	assert.Equal(t, []string{"reload_tools", "decl", "greet", "ws"}, toolNames(a),
		"declared > agent folder > shared; a bad name, a folder without run or one in the workspace is no tool")
	assert.Equal(t, "declared\n", call(t, a, "decl", `{}`).Content)
	assert.Equal(t, "Greets.", a.Tools[2].Spec().Description)
	dir := filepath.Join(cfg.AgentsDir, "assistant")
	assert.Equal(t, "[hi]\n"+filepath.Join(dir, "tools", "greet")+"\n", call(t, a, "greet", `{"args":"hi"}`).Content,
		"a discovered tool runs in its own folder")
	assert.Equal(t, "CLI tool: ws", a.Tools[3].Spec().Description)
	realWS, err := filepath.EvalSymlinks(filepath.Join(ws, "tools", "ws"))
	require.NoError(t, err)
	assert.Equal(t, "[x]\n"+realWS+"\n", call(t, a, "ws", `{"args":"x"}`).Content,
		"a shared tool runs in its own folder")

	var scan tools.ToolScan
	require.NoError(t, json.Unmarshal([]byte(call(t, a, "reload_tools", `{}`).Content), &scan))
	assert.Equal(t, 3, scan.Count, "decl, greet and ws: what the folders hold, as Agnx reports it")
	assert.Equal(t, []string{filepath.Join(dir, "tools"), filepath.Join(ws, "tools")}, scan.Dirs)
	assert.Equal(t, tools.DiscoveredTool{Name: "greet", Description: "Greets."}, scan.Tools[1])

	// A tool written later is found at the next use, from the folders' times.
	p := filepath.Join(ws, "tools", "later", "run")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\necho later\n"), 0o755))
	future := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(filepath.Join(ws, "tools"), future, future))
	_, ok := c.CachedAgent("assistant")
	assert.False(t, ok, "the new tool folder makes the agent stale")
	a, err = c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Contains(t, toolNames(a), "later")
	assert.Equal(t, "later\n", call(t, a, "later", `{}`).Content)
}

func TestDiscover_LinkOutIsRefused(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "run"), []byte("#!/bin/sh\necho escaped\n"), 0o755))
	c, cfg := newTestCache(t)
	dir := filepath.Join(cfg.AgentsDir, "assistant", "tools")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "inner"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "evil")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "run"), filepath.Join(dir, "inner", "run")))
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.NotContains(t, toolNames(a), "evil")
	assert.NotContains(t, toolNames(a), "inner")
	assert.Len(t, a.Spec.Warnings, 2)
	assert.Contains(t, strings.Join(a.Spec.Warnings, "\n"), "leads out of its folder")
}

// The schedule tool comes from the App's schedule service; a factory
// without one (agent validate) leaves it out without a warning.
func TestBuiltin_Schedule(t *testing.T) {
	c, cfg, a := toolAgentCache(t, "bwrap", "    - {type: builtin, name: schedule}\n", nil)
	assert.Empty(t, toolNames(a))
	assert.Empty(t, a.Spec.Warnings)
	c = withTools(c, cfg, func(o *toolset.Options) { o.Sched = sched.New(sched.Options{}) })
	c.MarkStale("assistant")
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Equal(t, []string{"schedule"}, toolNames(a))
}

func TestCLI_MinimalEnvPlusDeclared(t *testing.T) {
	needSandbox(t)
	t.Setenv("OPENAI_API_KEY", "sk-daemon")
	t.Setenv("TZ", "Europe/Oslo")
	c, cfg := newTestCache(t)
	cfg.Sandbox.Env = map[string]config.Secret{"WEATHER_KEY": "w-1", "OTHER": "o"}
	c = withTools(c, cfg, sandboxMode("bwrap"))
	dir := filepath.Join(cfg.AgentsDir, "assistant")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "env.sh"), []byte("#!/bin/sh\nenv | sort\n"), 0o755))
	yaml := filepath.Join(dir, "agent.yaml")
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	head := string(data[:strings.Index(string(data), "  tools:")])
	require.NoError(t, os.WriteFile(yaml, []byte(head+"  tools:\n    - {type: cli, name: env, command: ./env.sh, env: [WEATHER_KEY, TZ]}\n"), 0o644))
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	out := call(t, a, "env", `{}`).Content
	assert.Contains(t, out, "WEATHER_KEY=w-1\n")
	assert.Contains(t, out, "TZ=Europe/Oslo\n")
	assert.NotContains(t, out, "sk-daemon", "the daemon's provider keys never reach a tool")
	assert.NotContains(t, out, "OTHER=", "only the names the tool lists")

	cachetest.Edit(t, yaml, func(s string) string { return strings.Replace(s, "env: [WEATHER_KEY, TZ]", "env: [OPENAI_API_KEY]", 1) })
	err = c.Reload("assistant")
	assert.ErrorContains(t, err, "env names OPENAI_API_KEY, which sandbox.env in the configuration does not have")
}

func TestDiscover_TrustModeRunsInTheToolFolder(t *testing.T) {
	testenv.SkipIfNoReexec(t, "trust mode runs the re-executed test binary as the init that sets the limits")
	c, cfg, _ := toolAgentCache(t, "trust", "    - {type: builtin, name: reload_tools}\n",
		map[string]string{"tools/here/run": "#!/bin/sh\npwd\n"})
	p := filepath.Join(cfg.DataDir, "tools", "ws", "run")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\npwd\n"), 0o755))
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	real := func(p string) string { r, err := filepath.EvalSymlinks(p); require.NoError(t, err); return r }
	assert.Equal(t, real(filepath.Join(cfg.AgentsDir, "assistant", "tools", "here"))+"\n", call(t, a, "here", `{}`).Content)
	assert.Equal(t, real(filepath.Dir(p))+"\n", call(t, a, "ws", `{}`).Content, "a shared tool runs in its own folder")
}

func TestCheckAgents_ShowsToolWarnings(t *testing.T) {
	c, cfg := newTestCache(t)
	c.Close()
	yaml := filepath.Join(cfg.AgentsDir, "assistant", "agent.yaml")
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	head := string(data[:strings.Index(string(data), "  tools:")])
	require.NoError(t, os.WriteFile(yaml, []byte(head+"  tools:\n    - {type: builtin, name: schedule}\n"+
		"    - {type: cli, name: gone, command: ./gone.sh}\n"), 0o644))
	checks := CheckAgents(cfg, []string{"assistant"}, nil)
	require.NoError(t, checks[0].Err)
	warnings := strings.Join(checks[0].Warnings, "\n")
	assert.Contains(t, warnings, `cli tool "gone": `)
	assert.NotContains(t, warnings, "schedule", "every Agnx built-in exists")
}
