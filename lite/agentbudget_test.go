package lite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
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

// fakeHeld stands for heldNow: every module measured with it holds code
// and heap bytes (it is read once before and once after each load).
func fakeHeld(code, heap int64) func() toolset.Held {
	var calls atomic.Int64
	return func() toolset.Held {
		n := calls.Add(1) / 2
		return toolset.Held{Code: n * code, Heap: n * heap}
	}
}

// withMeasure gives c, outside a daemon, a tool factory whose WASM loads
// are measured by measure, in place of the one it has (nothing was built
// with it yet).
func withMeasure(c *agentCache, measure func() toolset.Held) {
	withTools(c, func(o *toolset.Options) { o.Measure = measure })
}

// measuredApp is guardedApp whose WASM loads are measured by measure.
func measuredApp(t *testing.T, measure func() toolset.Held) (*App, runtime.SessionInfo) {
	return guardedAppWith(t, &Options{tools: func(o *toolset.Options, _ *toolset.SupervisorOptions) { o.Measure = measure }})
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
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { app.Close() })
	limitMB := config.Default().Runtime.MemoryLimitMB
	app.Agents.setBudget(limitMB) // as Open does with the default config
	dir, err := agents.WriteTemplate(cfg.AgentsDir, "tools")
	require.NoError(t, err)
	exampleTool(t, dir, "calc", calc)
	exampleTool(t, dir, "wc", wc)
	ws := app.Config.WorkspaceDir("tools")
	require.NoError(t, os.MkdirAll(ws, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("one two\nthree\n"), 0o600))

	ctx := context.Background()
	g := appGuard(app, limitMB, func() (int64, error) { return 8<<20 + app.Agents.counts().held.Total() + 10<<20, nil })
	session, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "tools"})
	require.NoError(t, err, "the agent is built under the default limit")
	before := app.Agents.counts()
	require.Equal(t, uint64(1), before.builds)
	require.Positive(t, before.held.Total(), "the tools' fixed cost is measured")
	for i := range 5 {
		results := sendAndCollect(t, app, session.ID, "count")
		assert.ElementsMatch(t, []string{"1024", "2 lines, 3 words, 14 bytes in notes.txt"}, results, "message %d", i+1)
		g.Check(ctx)
	}
	after := app.Agents.counts()
	assert.Equal(t, before.builds, after.builds, "no build between the calls")
	assert.Zero(t, after.evictions[evictedMemory]+after.evictions[evictedBudget]+after.evictions[evictedLRU], "no eviction")
	assert.False(t, g.Busy(), "no turn refused")
	assert.Contains(t, loaded(app.Agents), "tools")
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

// An agent whose tools hold more than the limit leaves for agents is
// refused at its build with the figures and the setting to raise, and
// the refusal is kept: the next message is refused without a build,
// until the agent's files change.
func TestAgentBudget_RefusedOnceAtBuild(t *testing.T) {
	c, cfg := newTestCache(t)
	c.setBudget(40)
	withMeasure(c, fakeHeld(20<<20, 10<<20))
	dir := filepath.Join(cfg.AgentsDir, "assistant")
	echoTool(t, filepath.Join(dir, "tools", "echo"))

	_, err := c.LoadAgent("assistant")
	var big *AgentTooBigError
	require.ErrorAs(t, err, &big)
	assert.EqualError(t, err, "agent assistant needs 30 MiB of memory for its compiled WASM tools (echo 30 MiB), "+
		"more than the 24 MiB that runtime.memory_limit_mb = 40 leaves for agents: "+
		"set runtime.memory_limit_mb to at least 46 in agnx.yaml, or give the agent fewer WASM tools")
	assert.Empty(t, loaded(c))

	_, err = c.LoadAgent("assistant")
	assert.ErrorAs(t, err, &big, "refused again")
	assert.Equal(t, uint64(1), c.counts().builds, "without a build")

	c.setBudget(64) // the limit raised (a restart, in the daemon)
	edit(t, filepath.Join(dir, agents.FileName), func(s string) string { return s })
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err, "a changed agent is built again")
	assert.Equal(t, uint64(2), c.counts().builds)
	assert.Equal(t, toolset.Held{Code: 20 << 20, Heap: 10 << 20}, fixedCost(a.Tools), "the module's figure, measured once")
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
	echoTool(t, filepath.Join(cfg.AgentsDir, "assistant", "tools", "echo"))
	assert.NoError(t, ValidateAgents(cfg, []string{"assistant"}, nil)[0], "it fits the default limit")
	cfg.Runtime.MemoryLimitMB = 16
	err = ValidateAgents(cfg, []string{"assistant"}, nil)[0]
	var big *AgentTooBigError
	require.ErrorAs(t, err, &big)
	assert.Contains(t, err.Error(), "runtime.memory_limit_mb = 16 leaves for agents")
}

// The loaded agents' fixed costs stay within the budget: a build that
// would go over evicts the least recently used idle agent holding one,
// never a pinned one; agents that hold none are not counted.
func TestAgentBudget_LoadedAgentsStayWithinIt(t *testing.T) {
	c := lruCache(t, 8, "a", "b")
	c.setBudget(48) // 32 MiB for agents
	withMeasure(c, fakeHeld(15<<20, 5<<20))
	for _, n := range []string{"a", "b"} {
		echoTool(t, filepath.Join(c.cfg.AgentsDir, n, "tools", "echo"))
	}
	load := func(name string) {
		t.Helper()
		_, err := c.LoadAgent(name)
		require.NoError(t, err)
	}
	load("assistant")
	load("a")
	load("b")
	assert.ElementsMatch(t, []string{"assistant", "b"}, loaded(c), "a and b hold 40 MiB together: a went")
	assert.Equal(t, uint64(1), c.counts().evictions[evictedBudget])

	c.Pin("b") // b has a turn running
	load("a")
	assert.ElementsMatch(t, []string{"assistant", "a", "b"}, loaded(c), "over the budget while b's turn runs")
	c.Unpin("b")
	assert.Equal(t, 2, c.evictIdle(), "the guard evicts assistant, which holds nothing, and brings the rest within the budget")
	assert.Equal(t, []string{"a"}, loaded(c), "b was the least recently used of the two")
	assert.Equal(t, toolset.Held{Code: 15 << 20, Heap: 5 << 20}, c.counts().held)
}

// Over its high-water mark the guard evicts idle agents that hold no
// fixed cost, but not one the budget holds: that would win its memory
// back only until its next message built it again.
func TestMemGuard_KeepsWhatTheBudgetHolds(t *testing.T) {
	app, _ := measuredApp(t, fakeHeld(15<<20, 5<<20))
	ctx := context.Background()
	app.Agents.setBudget(64)
	dir, err := agents.WriteTemplate(app.Config.AgentsDir, "tools")
	require.NoError(t, err)
	echoTool(t, filepath.Join(dir, "tools", "echo"))
	_, err = app.Agents.LoadAgent("tools")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"assistant", "tools"}, loaded(app.Agents))

	g := appGuard(app, 64, func() (int64, error) { return 80 << 20, nil }) // over 64 MiB + 1/8
	g.Check(ctx)
	assert.Equal(t, []string{"tools"}, loaded(app.Agents))
	c := app.Agents.counts()
	assert.Equal(t, uint64(1), c.evictions[evictedMemory], "assistant, which holds nothing")
	assert.True(t, g.Busy(), "the memory is short for other reasons: new turns wait")
}

// The heap's soft limit leaves room for the loaded agents' compiled code,
// which the Go runtime does not count: heap and code together stay near
// the limit.
func TestMemGuard_SoftLimitLeavesRoomForCode(t *testing.T) {
	app, _ := measuredApp(t, fakeHeld(15<<20, 5<<20))
	ctx := context.Background()
	app.Agents.setBudget(64)
	dir, err := agents.WriteTemplate(app.Config.AgentsDir, "tools")
	require.NoError(t, err)
	echoTool(t, filepath.Join(dir, "tools", "echo"))

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
