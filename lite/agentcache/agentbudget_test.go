package agentcache

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
)

// withMeasure gives c, outside a daemon, a tool factory whose WASM loads
// are measured by measure, in place of the one it has (nothing was built
// with it yet).
func withMeasure(c *Cache, measure func() toolset.Held) {
	c.tools.Close()
	o := StandaloneTools(c.cfg, c.log)
	o.Measure = measure
	c.tools = toolset.New(o)
}

// An agent whose tools hold more than the limit leaves for agents is
// refused at its build with the figures and the setting to raise, and
// the refusal is kept: the next message is refused without a build,
// until the agent's files change.
func TestAgentBudget_RefusedOnceAtBuild(t *testing.T) {
	c, cfg := newTestCache(t)
	c.setBudget(40)
	withMeasure(c, cachetest.FakeHeld(20<<20, 10<<20))
	dir := filepath.Join(cfg.AgentsDir, "assistant")
	cachetest.EchoTool(t, filepath.Join(dir, "tools", "echo"))

	_, err := c.LoadAgent("assistant")
	var big *AgentTooBigError
	require.ErrorAs(t, err, &big)
	assert.EqualError(t, err, "agent assistant needs 30 MiB of memory for its compiled WASM tools (echo 30 MiB), "+
		"more than the 24 MiB that runtime.memory_limit_mb = 40 leaves for agents: "+
		"set runtime.memory_limit_mb to at least 46 in agnx.yaml, or give the agent fewer WASM tools")
	assert.Empty(t, loaded(c))

	_, err = c.LoadAgent("assistant")
	assert.ErrorAs(t, err, &big, "refused again")
	assert.Equal(t, uint64(1), c.Counts().Builds, "without a build")

	c.setBudget(64) // the limit raised (a restart, in the daemon)
	cachetest.Edit(t, filepath.Join(dir, agents.FileName), func(s string) string { return s })
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err, "a changed agent is built again")
	assert.Equal(t, uint64(2), c.Counts().Builds)
	assert.Equal(t, toolset.Held{Code: 20 << 20, Heap: 10 << 20}, fixedCost(a.Tools), "the module's figure, measured once")
}

// The loaded agents' fixed costs stay within the budget: a build that
// would go over evicts the least recently used idle agent holding one,
// never a pinned one; agents that hold none are not counted.
func TestAgentBudget_LoadedAgentsStayWithinIt(t *testing.T) {
	c := lruCache(t, 8, "a", "b")
	c.setBudget(48) // 32 MiB for agents
	withMeasure(c, cachetest.FakeHeld(15<<20, 5<<20))
	for _, n := range []string{"a", "b"} {
		cachetest.EchoTool(t, filepath.Join(c.cfg.AgentsDir, n, "tools", "echo"))
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
	assert.Equal(t, uint64(1), c.Counts().Evictions[EvictedBudget])

	c.Pin("b") // b has a turn running
	load("a")
	assert.ElementsMatch(t, []string{"assistant", "a", "b"}, loaded(c), "over the budget while b's turn runs")
	c.Unpin("b")
	assert.Equal(t, 2, c.EvictIdle(), "the guard evicts assistant, which holds nothing, and brings the rest within the budget")
	assert.Equal(t, []string{"a"}, loaded(c), "b was the least recently used of the two")
	assert.Equal(t, toolset.Held{Code: 15 << 20, Heap: 5 << 20}, c.Counts().Held)
}
