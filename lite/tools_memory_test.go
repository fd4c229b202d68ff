package lite

import (
	"context"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/memory"
)

// spec.memory gives the agent the memory tool (once, even when it is
// also listed), its directive, and world memory under the data dir.
func TestTools_MemoryFromSpec(t *testing.T) {
	_, cfg, a := toolAgentCache(t, "trust", "    - {type: builtin, name: memory}\n    - {type: builtin, name: Recall}\n"+
		"    - {type: builtin, name: list_dir}\n  memory: {backend: filesystem}\n", nil)
	assert.Equal(t, []string{"list_dir", "memory"}, toolNames(a))
	assert.Empty(t, a.Spec.Warnings)
	assert.Contains(t, a.Spec.RenderSystem(time.Now()), agents.MemoryDirective)

	res := call(t, a, "memory", `{"action":"remember","content":"The user's cat is called Miso."}`)
	require.False(t, res.IsError, res.Content)
	daily := filepath.Join(cfg.AgentsDir, "assistant", "memory", "daily", time.Now().Format(memory.DateLayout)+".md")
	assert.Equal(t, "Remembered. Written to "+daily, res.Content)
	res = call(t, a, "memory", `{"action":"update_world","topic":"pets","content":"Miso: a cat"}`)
	assert.Equal(t, "Updated world knowledge at "+filepath.Join(cfg.DataDir, "memory", "world", "pets.md"), res.Content)
	res = call(t, a, "memory", `{"action":"recall","query":"cat"}`)
	assert.Contains(t, res.Content, "Search is not set up for this agent", "no index wired: the plain recall")
	assert.Contains(t, res.Content, "Miso")

	hooks := a.Hooks
	assert.Empty(t, hooks.BeforeTool, "the default recall guard is the loop's, not written into the agent")
}

func TestTools_MemoryBackendUnknown(t *testing.T) {
	a := toolAgent(t, "trust", "    - {type: builtin, name: list_dir}\n  memory: {backend: postgres}\n", nil)
	assert.Equal(t, []string{"list_dir"}, toolNames(a))
	require.Len(t, a.Spec.Warnings, 1)
	assert.Equal(t, `spec.memory.backend "postgres" is not one agnx-lite has (only filesystem): the agent runs without the memory tool`, a.Spec.Warnings[0])
	assert.NotContains(t, a.Spec.RenderSystem(time.Now()), agents.MemoryDirective)
}

// Listing the built-in memory tool without spec.memory gives it too.
func TestTools_MemoryListedOnly(t *testing.T) {
	a := toolAgent(t, "trust", "    - {type: builtin, name: memory}\n", nil)
	assert.Equal(t, []string{"memory"}, toolNames(a))
	assert.Empty(t, a.Spec.Warnings)
}

// A cli tool of the agent's own named memory keeps the name; the
// built-in one is left out, with a warning.
func TestTools_MemoryNameTakenByOwnTool(t *testing.T) {
	a := toolAgent(t, "trust", "    - {type: cli, name: memory, command: ./mem.sh}\n  memory: {}\n",
		map[string]string{"mem.sh": "#!/bin/sh\necho mine\n"})
	assert.Equal(t, []string{"memory"}, toolNames(a))
	_, builtin := a.Tools[0].(*memory.Tool)
	assert.False(t, builtin)
	require.Len(t, a.Spec.Warnings, 1)
	assert.Contains(t, a.Spec.Warnings[0], "spec.tools declares its own tool named memory")
}

type stubSearch struct{ agent string }

func (s stubSearch) Search(context.Context, memory.Query) (memory.Results, error) {
	return memory.Results{Mode: "keyword", Hits: []memory.Hit{{Source: "memory/MEMORY.md", Text: "from the index of " + s.agent}}}, nil
}

// The seam the index plugs into: recall with a query goes through it.
func TestTools_MemoryIndexSeam(t *testing.T) {
	c, cfg := newTestCache(t)
	c = withTools(c, cfg, func(o *toolset.Options) {
		o.MemIndex = func(a *agents.Agent) memory.Searcher { return stubSearch{a.Name} }
	})
	yaml := filepath.Join(cfg.AgentsDir, "assistant", agents.FileName)
	cachetest.Edit(t, yaml, func(s string) string { return s + "  memory: {}\n" })
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	res := call(t, a, "memory", `{"action":"recall","query":"anything"}`)
	assert.Contains(t, res.Content, "[memory/MEMORY.md] from the index of assistant")

	// A rebuild of the agent shares its bank (and the bank's lock).
	b1 := memTool(t, a.Tools).Bank
	err = c.Reload("assistant")
	require.NoError(t, err)
	a, err = c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Same(t, b1, memTool(t, a.Tools).Bank)
}

func memTool(t *testing.T, list []runtime.Tool) *memory.Tool {
	t.Helper()
	for _, tool := range list {
		if mt, ok := tool.(*memory.Tool); ok {
			return mt
		}
	}
	t.Fatal("no memory tool")
	return nil
}

func TestConfig_WorldMemoryDir(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = "/data"
	assert.Equal(t, "/data/memory/world", cfg.WorldMemoryDir())

	dir := t.TempDir()
	file := filepath.Join(dir, "agnx.yaml")
	require.NoError(t, os.WriteFile(file, []byte("world_memory:\n  path: shared/world\n"), 0o600))
	cfg, err := config.Locate(file, filepath.Join(dir, "data"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "shared", "world"), cfg.WorldMemoryDir(), "relative to the config's folder")
	assert.False(t, strings.Contains(strings.Join(cfg.Warnings, "\n"), "world_memory"), "honoured, no warning")
}

// world_memory's caps reach every agent's memory tool; out-of-range
// values are file:line errors.
func TestConfig_WorldMemoryCaps(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "agnx.yaml")
	require.NoError(t, os.WriteFile(file, []byte("world_memory:\n  max_file_kb: 1\n  max_total_kb: 2\n  max_topics: 2\n"), 0o600))
	cfg, err := config.Locate(file, filepath.Join(dir, "data"))
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	assert.Empty(t, cfg.Warnings)
	assert.Equal(t, memory.WorldLimits{FileBytes: 1 << 10, TotalBytes: 2 << 10, Topics: 2}, cfg.WorldMemory.Limits())
	_, err = config.Init(cfg)
	require.NoError(t, err)
	c := agentcache.NewStandalone(cfg, slog.New(slog.DiscardHandler))
	yaml := filepath.Join(cfg.AgentsDir, "assistant", agents.FileName)
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	i := strings.Index(string(data), "  tools:")
	require.Positive(t, i)
	require.NoError(t, os.WriteFile(yaml, []byte(string(data[:i])+"  tools:\n    - {type: builtin, name: memory}\n"), 0o644))
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)

	res := call(t, a, "memory", `{"action":"update_world","topic":"pets","content":"`+strings.Repeat("m", 1<<10+1)+`"}`)
	assert.Equal(t, "Tool execution failed: a world topic holds at most 1 KiB: keep what matters most, or split it across topics", res.Content)
	for _, topic := range []string{"pets", "people"} {
		res = call(t, a, "memory", `{"action":"update_world","topic":"`+topic+`","content":"a fact"}`)
		require.False(t, res.IsError, res.Content)
	}
	res = call(t, a, "memory", `{"action":"update_world","topic":"places","content":"a fact"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "world memory already has its 2 topics")

	for text, want := range map[string]string{
		"world_memory:\n  max_file_kb: 65\n":                   "agnx.yaml:2: world_memory.max_file_kb 65 is out of range 1..64",
		"world_memory:\n  max_file_kb: 8\n  max_total_kb: 4\n": "agnx.yaml:3: world_memory.max_total_kb 4 is out of range 8..1048576",
		"world_memory:\n  max_topics: 5000\n":                  "agnx.yaml:2: world_memory.max_topics 5000 is out of range 1..4096",
		"world_memory:\n  max_topics: -1\n":                    "agnx.yaml:2: world_memory.max_topics -1 is out of range 1..4096",
	} {
		require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
		cfg, err := config.Locate(file, filepath.Join(dir, "data"))
		if err == nil {
			err = cfg.Validate()
		}
		assert.ErrorContains(t, err, want, text)
	}
}
