package lite

import (
	"context"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/wasmtools"
)

// measuredApp is guardedApp whose WASM loads are measured by measure and
// whose agents' tools share the budget of a memory limit of limitMB.
func measuredApp(t *testing.T, limitMB int, measure func() toolset.Held) (*App, runtime.SessionInfo) {
	return guardedAppWith(t, &Options{tools: func(o *toolset.Options, _ *toolset.SupervisorOptions) { o.Measure = measure },
		agents: func(o *agentcache.Options) { o.LimitMB = limitMB }})
}

// exampleModules builds the shipped example tools calc and wc for wasip1
// with the go that runs the tests, as make wasm does, in one go build.
func exampleModules(t *testing.T) (calc, wc []byte) {
	t.Helper()
	goBin := filepath.Join(goruntime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Skip("no Go toolchain to build the example WASM tools: " + err.Error())
		}
	}
	out := t.TempDir()
	cmd := exec.Command(goBin, "build", "-trimpath", "-o", out+string(filepath.Separator),
		"../wasmtools/examples/calc", "../wasmtools/examples/wc")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build for wasip1: %s", msg)
	calc, err = os.ReadFile(filepath.Join(out, "calc"))
	require.NoError(t, err)
	wc, err = os.ReadFile(filepath.Join(out, "wc"))
	require.NoError(t, err)
	return calc, wc
}

// exampleTool puts an example's manifest and module in the agent's tools/,
// with the longest timeout there is: the test is not about the timeout, and
// a Go module starts slowly under -race on a loaded machine.
func exampleTool(t *testing.T, agentDir, name string, module []byte) {
	t.Helper()
	manifest, err := os.ReadFile(filepath.Join("..", "wasmtools", "examples", name, "tool.yaml"))
	require.NoError(t, err)
	slow := regexp.MustCompile(`(?m)^  timeout: .*$`).ReplaceAll(manifest, []byte("  timeout: 10m"))
	dir := filepath.Join(agentDir, "tools", name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tool.yaml"), slow, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".wasm"), module, 0o644))
}

// An agent with both shipped Go example tools (calc and wc: some 40 MiB
// compiled, 52–77 MB of anonymous memory in all against the 40 MB default
// it had) answers five messages in a row, each calling both tools, under
// the default memory limit, with the memory guard checking after each:
// it is built once and never evicted. The guard sees what the daemon
// holds natively: a baseline, the tools' measured fixed cost, and a
// call's instance.
func TestAgentBudget_TwoGoToolsFiveCalls(t *testing.T) {
	if testenv.Emulated() {
		t.Skip("two 3.5 MB Go modules take many minutes to compile under emulation; the budget's rules are tested with small modules (TestAgentBudget_*)")
	}
	calc, wc := exampleModules(t)
	fake := llmtest.NewHandler(t, llmtest.Ollama, func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.Last().Role == "tool" {
			return llmtest.Reply{Text: "done"}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "calc", Arguments: `{"expression": "2^10"}`}, {Name: "wc", Arguments: `{"path": "notes.txt"}`}}}
	})
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0 // the test drives a guard of its own
	_, err := config.Init(cfg)
	require.NoError(t, err)
	limitMB := config.Default().Runtime.MemoryLimitMB
	// The budget as Open sets it with the default config.
	app, err := Open(cfg, &Options{agents: func(o *agentcache.Options) { o.LimitMB = limitMB }})
	require.NoError(t, err)
	t.Cleanup(func() { app.Close() })
	dir, err := agents.WriteTemplate(cfg.AgentsDir, "tools")
	require.NoError(t, err)
	exampleTool(t, dir, "calc", calc)
	exampleTool(t, dir, "wc", wc)
	ws := app.Config.WorkspaceDir("tools")
	require.NoError(t, os.MkdirAll(ws, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("one two\nthree\n"), 0o600))

	ctx := context.Background()
	g := appGuard(app, limitMB, func() (int64, error) { return 8<<20 + app.Agents.Counts().Held.Total() + 10<<20, nil })
	session, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "tools"})
	require.NoError(t, err, "the agent is built under the default limit")
	before := app.Agents.Counts()
	require.Equal(t, uint64(1), before.Builds)
	require.Positive(t, before.Held.Total(), "the tools' fixed cost is measured")
	for i := range 5 {
		results := sendAndCollect(t, app, session.ID, "count")
		assert.ElementsMatch(t, []string{"1024", "2 lines, 3 words, 14 bytes in notes.txt"}, results, "message %d", i+1)
		g.Check(ctx)
	}
	after := app.Agents.Counts()
	assert.Equal(t, before.Builds, after.Builds, "no build between the calls")
	assert.Zero(t, after.Evictions[agentcache.EvictedMemory]+after.Evictions[agentcache.EvictedBudget]+after.Evictions[agentcache.EvictedLRU], "no eviction")
	assert.False(t, g.Busy(), "no turn refused")
	assert.Contains(t, app.Agents.LoadedNames(), "tools")
}

// sendAndCollect sends text to the session and returns the contents of
// the tool results of its turn, each checked a success.
func sendAndCollect(t *testing.T, app *App, sid, text string) []string {
	t.Helper()
	ctx := context.Background()
	sub, err := app.Loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	defer sub.Close()
	_, err = app.Loop.Send(ctx, sid, runtime.Input{Content: text})
	require.NoError(t, err)
	var out []string
	for e := range sub.C() {
		switch e.Type {
		case runtime.EvToolResult:
			assert.True(t, e.Success, "%s failed: %s", e.ToolName, e.Content)
			out = append(out, strings.TrimSpace(e.Content))
		case runtime.EvTurnEnd:
			return out
		}
	}
	t.Fatal("the subscription ended before the turn")
	return nil
}

// agent validate says what the daemon would: an agent whose tools hold
// more than the limit leaves for agents does not validate. With 16 MB
// nothing is left, and the compiler's code for even the 309-byte echo
// module is a page of memory.
func TestAgentBudget_ValidateRefuses(t *testing.T) {
	if wasmtools.AutoMode() != wasmtools.ModeCompiler {
		t.Skip("the interpreter holds a module in the heap, which other goroutines move: the figure of a tiny module may be 0")
	}
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	cachetest.EchoTool(t, filepath.Join(cfg.AgentsDir, "assistant", "tools", "echo"))
	assert.NoError(t, ValidateAgents(cfg, []string{"assistant"}, nil)[0], "it fits the default limit")
	cfg.Runtime.MemoryLimitMB = 16
	err = ValidateAgents(cfg, []string{"assistant"}, nil)[0]
	var big *agentcache.AgentTooBigError
	require.ErrorAs(t, err, &big)
	assert.Contains(t, err.Error(), "runtime.memory_limit_mb = 16 leaves for agents")
}

// Over its high-water mark the guard evicts idle agents that hold no
// fixed cost, but not one the budget holds: that would win its memory
// back only until its next message built it again.
func TestMemGuard_KeepsWhatTheBudgetHolds(t *testing.T) {
	app, _ := measuredApp(t, 64, cachetest.FakeHeld(15<<20, 5<<20))
	ctx := context.Background()
	dir, err := agents.WriteTemplate(app.Config.AgentsDir, "tools")
	require.NoError(t, err)
	cachetest.EchoTool(t, filepath.Join(dir, "tools", "echo"))
	_, err = app.Agents.LoadAgent("tools")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"assistant", "tools"}, app.Agents.LoadedNames())

	g := appGuard(app, 64, func() (int64, error) { return 80 << 20, nil }) // over 64 MiB + 1/8
	g.Check(ctx)
	assert.Equal(t, []string{"tools"}, app.Agents.LoadedNames())
	c := app.Agents.Counts()
	assert.Equal(t, uint64(1), c.Evictions[agentcache.EvictedMemory], "assistant, which holds nothing")
	assert.True(t, g.Busy(), "the memory is short for other reasons: new turns wait")
}

// The heap's soft limit leaves room for the loaded agents' compiled code,
// which the Go runtime does not count: heap and code together stay near
// the limit.
func TestMemGuard_SoftLimitLeavesRoomForCode(t *testing.T) {
	app, _ := measuredApp(t, 64, cachetest.FakeHeld(15<<20, 5<<20))
	ctx := context.Background()
	dir, err := agents.WriteTemplate(app.Config.AgentsDir, "tools")
	require.NoError(t, err)
	cachetest.EchoTool(t, filepath.Join(dir, "tools", "echo"))

	g := appGuard(app, 64, func() (int64, error) { return 20 << 20, nil })
	prev := debug.SetMemoryLimit(-1)
	gctx, stop := context.WithCancel(ctx)
	require.NoError(t, g.Start(gctx))
	defer func() {
		stop()
		assert.NoError(t, g.Stop(ctx))
		assert.Equal(t, prev, debug.SetMemoryLimit(-1), "the limit is put back")
	}()
	assert.Equal(t, int64(64<<20), debug.SetMemoryLimit(-1), "no agent holds code yet")
	_, err = app.Agents.LoadAgent("tools")
	require.NoError(t, err)
	g.Check(ctx)
	assert.Equal(t, int64(49<<20), debug.SetMemoryLimit(-1), "64 MiB less the tools' 15 MiB of code")
	done := g.Building()
	assert.Equal(t, int64(128<<20), debug.SetMemoryLimit(-1), "a build gets twice the limit")
	done()
	assert.Equal(t, int64(49<<20), debug.SetMemoryLimit(-1))
}
