package agentcache

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

func newTestCache(t *testing.T) (*Cache, *config.Config) {
	t.Helper()
	cfg := cachetest.Init(t)
	c := NewStandalone(cfg, slog.New(slog.DiscardHandler))
	c.recheck = 0
	return c, cfg
}

func TestAgentCache_LoadAgent(t *testing.T) {
	c, cfg := newTestCache(t)
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Equal(t, "assistant", a.Spec.Name)
	assert.Equal(t, "qwen3:1.7b", a.Spec.Model.Name)
	assert.Equal(t, cfg.WorkspaceDir("assistant"), a.Spec.Workspace)
	assert.DirExists(t, a.Spec.Workspace)
	var names []string
	for _, tool := range a.Tools {
		names = append(names, tool.Spec().Name)
	}
	assert.Equal(t, []string{"read_file", "list_dir"}, names)

	again, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Same(t, a, again, "an unchanged agent is not rebuilt")
}

func TestAgentCache_ReloadAndKeepLastGood(t *testing.T) {
	c, cfg := newTestCache(t)
	yaml := filepath.Join(cfg.AgentsDir, "assistant", agents.FileName)
	first, err := c.LoadAgent("assistant")
	require.NoError(t, err)

	cachetest.Edit(t, yaml, func(s string) string { return strings.Replace(s, "qwen3:1.7b", "llama3.2:3b", 1) })
	second, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Equal(t, "llama3.2:3b", second.Spec.Model.Name, "a changed file reloads the agent")
	assert.NotSame(t, first, second)

	cachetest.Edit(t, yaml, func(s string) string { return s + "\nbogus: [\n" })
	third, err := c.LoadAgent("assistant")
	require.NoError(t, err, "an invalid edit keeps the last good version")
	assert.Same(t, second, third)

	soul := filepath.Join(cfg.AgentsDir, "assistant", "SOUL.md")
	cachetest.Edit(t, yaml, func(s string) string { return strings.Replace(s, "\nbogus: [\n", "", 1) })
	cachetest.Edit(t, soul, func(string) string { return "You are a pirate." })
	fourth, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Contains(t, fourth.Spec.RenderSystem(time.Now()), "You are a pirate.", "a prompt edit reloads too")
}

func TestAgentCache_Errors(t *testing.T) {
	c, cfg := newTestCache(t)
	_, err := c.LoadAgent("ghost")
	assert.ErrorIs(t, err, ErrAgentNotFound)
	assert.ErrorContains(t, err, `agnx-lite agent create ghost`)

	_, err = c.LoadAgent("../etc")
	assert.ErrorIs(t, err, ErrAgentNotFound)
	assert.ErrorContains(t, err, "not a valid agent name")

	_, err = agents.WriteTemplate(cfg.AgentsDir, "copy")
	require.NoError(t, err)
	cachetest.Edit(t, filepath.Join(cfg.AgentsDir, "copy", agents.FileName), func(s string) string {
		return strings.Replace(s, "name: copy", "name: other", 1)
	})
	_, err = c.LoadAgent("copy")
	assert.ErrorContains(t, err, `metadata.name "other" does not match the folder name "copy"`)
}

func TestNewProvider(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENROUTER_API_KEY", "")
	_, err := NewProvider(agents.Model{Provider: "openai", Name: "gpt-4o-mini"})
	assert.ErrorContains(t, err, "export OPENAI_API_KEY")
	_, err = NewProvider(agents.Model{Provider: "openai", Name: "local", BaseURL: "http://127.0.0.1:8080/v1"})
	assert.NoError(t, err, "a local OpenAI-compatible server needs no key")
	_, err = NewProvider(agents.Model{Provider: "openrouter", Name: "x"})
	assert.ErrorContains(t, err, "export OPENROUTER_API_KEY")
	t.Setenv("OPENROUTER_API_KEY", "sk-or-test")
	_, err = NewProvider(agents.Model{Provider: "openrouter", Name: "x"})
	assert.NoError(t, err)
	_, err = NewProvider(agents.Model{Provider: "ollama", Name: "qwen3:1.7b"})
	assert.NoError(t, err)

	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	_, err = NewProvider(agents.Model{Provider: "anthropic", Name: "claude-sonnet-4-20250514"})
	assert.ErrorContains(t, err, "export ANTHROPIC_API_KEY")
	_, err = NewProvider(agents.Model{Provider: "anthropic", Name: "qwen3:1.7b", BaseURL: "http://localhost:11434"})
	assert.NoError(t, err, "Ollama's Anthropic-compatible endpoint needs no key")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	_, err = NewProvider(agents.Model{Provider: "anthropic", Name: "claude-sonnet-4-20250514"})
	assert.NoError(t, err)
}

func TestAgentCache_PolicyTiers(t *testing.T) {
	c, cfg := newTestCache(t)
	dir := filepath.Join(cfg.AgentsDir, "assistant")
	require.NoError(t, os.WriteFile(filepath.Join(cfg.DataDir, "policy.yaml"), []byte("mode: ask\n"), 0o644))
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	d, _ := a.Policy.Decide("read_file", "x")
	assert.Equal(t, agents.Ask, d, "the workspace tier applies")

	local := filepath.Join(dir, agents.PolicyLocalFile)
	require.NoError(t, os.WriteFile(local, []byte("allow: [\"read_file\"]\n"), 0o644))
	cachetest.Edit(t, local, func(s string) string { return s })
	a, err = c.LoadAgent("assistant")
	require.NoError(t, err)
	d, _ = a.Policy.Decide("read_file", "x")
	assert.Equal(t, agents.Allow, d, "a new local tier is picked up on the next use")

	cachetest.Edit(t, local, func(string) string { return "allow: [read_file\n" })
	_, err = c.LoadAgent("assistant")
	require.Error(t, err, "a broken policy edit refuses the agent: the edit may have been a deny rule")
	assert.Contains(t, err.Error(), local+":")
	_, err = c.LoadAgent("assistant")
	require.Error(t, err, "until it is fixed")
	cachetest.Edit(t, local, func(string) string { return "mode: restrict\n" })
	a, err = c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Equal(t, "restrict", a.Policy.Mode)
}

// An allow_always rule the loop saves is in the agent's next build.
func TestAgentCache_PolicyAllowAlwaysReload(t *testing.T) {
	c, cfg := newTestCache(t)
	dir := filepath.Join(cfg.AgentsDir, "assistant")
	require.NoError(t, os.WriteFile(filepath.Join(dir, agents.PolicyFile), []byte("mode: ask\n"), 0o644))
	past := time.Now().Add(-time.Hour) // the save below is certainly newer
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range append(entries, nil) {
		p := dir
		if e != nil {
			p = filepath.Join(dir, e.Name())
		}
		require.NoError(t, os.Chtimes(p, past, past))
	}
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	d, _ := a.Policy.Decide("read_file", "notes.md")
	assert.Equal(t, agents.Ask, d)

	_, err = new(agents.LocalPolicies).AddAllow(dir, agents.Call{Tool: "read_file", Subject: "notes.md"}.AllowRule())
	require.NoError(t, err)
	a, err = c.LoadAgent("assistant")
	require.NoError(t, err)
	d, _ = a.Policy.Decide("read_file", "notes.md")
	assert.Equal(t, agents.Allow, d)
}

// Spec reads an agent without building it: the built agent's spec while
// its files are unchanged, its files afresh after an edit, the last good
// spec after an edit that does not read; never a build.
func TestAgentCache_SpecNeverBuilds(t *testing.T) {
	c, cfg := newTestCache(t)
	yaml := filepath.Join(cfg.AgentsDir, "assistant", agents.FileName)
	spec, err := c.Spec("assistant")
	require.NoError(t, err)
	assert.Equal(t, "qwen3:1.7b", spec.Model.Name)
	assert.Equal(t, cfg.WorkspaceDir("assistant"), spec.Workspace, "the workspace's path, as a build gives it")
	assert.NoDirExists(t, spec.Workspace, "nothing made: no build ran")
	assert.Zero(t, c.builds)

	built, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	spec, err = c.Spec("assistant")
	require.NoError(t, err)
	assert.Same(t, built.Spec, spec, "the built agent's spec while its files are unchanged")

	cachetest.Edit(t, yaml, func(s string) string { return strings.Replace(s, "qwen3:1.7b", "llama3.2:3b", 1) })
	spec, err = c.Spec("assistant")
	require.NoError(t, err)
	assert.Equal(t, "llama3.2:3b", spec.Model.Name, "an edit is read at once")
	assert.Equal(t, uint64(1), c.builds, "and not built")

	cachetest.Edit(t, yaml, func(s string) string { return s + "\nbogus: [\n" })
	spec, err = c.Spec("assistant")
	require.NoError(t, err, "an edit that does not read leaves the last good spec")
	assert.Same(t, built.Spec, spec)

	_, err = c.Spec("ghost")
	assert.ErrorIs(t, err, ErrAgentNotFound)
}

// An MCP server's changed tool list makes the agent's next use rebuild it.
func TestAgentCache_MarkStaleRebuilds(t *testing.T) {
	c, _ := newTestCache(t)
	defer c.Close()
	c.recheck = 1 << 62 // only markStale can make it rebuild
	first, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	same, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Same(t, first, same)
	c.MarkStale("assistant")
	c.MarkStale("ghost") // not loaded: nothing happens
	second, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.NotSame(t, first, second)
	third, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Same(t, second, third, "rebuilt once")
}
