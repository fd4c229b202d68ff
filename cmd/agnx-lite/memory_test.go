package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memoryAgent creates the agent bob, with spec.memory when mem is set.
func memoryAgent(t *testing.T, c *cli, mem bool) string {
	t.Helper()
	code, _, errs := c.run("agent", "create", "bob")
	require.Equal(t, 0, code, errs)
	dir := filepath.Join(c.dir, "agents", "bob")
	if mem {
		yaml := filepath.Join(dir, "agent.yaml")
		data, err := os.ReadFile(yaml)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(yaml, append(data, "  memory: {backend: filesystem}\n"...), 0o644))
	}
	return dir
}

func TestCLI_MemoryShowAndSearch(t *testing.T) {
	c := newCLI(t)
	dir := memoryAgent(t, c, true)
	code, out, errs := c.run("memory", "show", "bob")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "agent bob has no memories yet")

	today := time.Now().Format("2006-01-02")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "memory", "daily"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "memory", "MEMORY.md"), []byte("Bob's human likes tea."), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "memory", "daily", today+".md"),
		[]byte("# "+today+"\n\n## 09:15\n\nMade green tea.\n\n## 10:00\n\nWrote code.\n"), 0o644))
	world := filepath.Join(c.dir, "memory", "world")
	require.NoError(t, os.MkdirAll(world, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(world, "drinks.md"), []byte("Tea is served at four."), 0o644))

	code, out, errs = c.run("memory", "show", "bob", "--days", "1")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "# World Knowledge\n\n## drinks\n\nTea is served at four.\n\n---\n\n# Your Memory\n\nBob's human likes tea."+
		"\n\n---\n\n# Recent Experiences\n\n# "+today+"\n\n## 09:15\n\nMade green tea.\n\n## 10:00\n\nWrote code.\n\n", out)

	// Ranked: the entry with both words first, then those with one.
	code, out, errs = c.run("memory", "search", "bob", "GREEN", "tea")
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n\n")
	require.Len(t, lines, 4, out)
	assert.Equal(t, "Memories matching \"GREEN tea\" (keyword search, best first):", lines[0])
	assert.Equal(t, "[memory/daily/"+today+".md 09:15] Made green tea.", lines[1])
	assert.ElementsMatch(t, []string{"world/drinks.md", "memory/MEMORY.md"},
		[]string{strings.Fields(lines[2][1:])[0], strings.Fields(lines[3][1:])[0]})

	code, out, errs = c.run("memory", "search", "bob", "tea", "--limit", "2")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, 2, strings.Count(out, "\n["), out)

	// An edit is seen by the next search, which re-reads only that file.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "memory", "MEMORY.md"), []byte("Bob's human switched to coffee."), 0o644))
	code, out, errs = c.run("memory", "search", "bob", "coffee")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "] Bob's human switched to coffee.", out)

	code, out, _ = c.run("memory", "search", "bob", "cocoa")
	require.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(out, "No memories match \"cocoa\"."), out)
}

func TestCLI_MemoryErrors(t *testing.T) {
	c := newCLI(t)
	memoryAgent(t, c, false)
	for args, want := range map[string]string{
		"memory show nobody":       `agnx-lite: no agent "nobody" in `,
		"memory show ../etc":       `agnx-lite: "../etc" is not a valid agent name: use letters, digits and hyphens`,
		"memory show bob":          `agnx-lite: agent bob has no memory: add "memory: {backend: filesystem}" under spec in `,
		"memory search bob":        "agnx-lite memory: search needs a query",
		"memory show":              "agnx-lite memory: say what to do and for which agent",
		"memory forget bob":        `agnx-lite memory: unknown subcommand "forget"`,
		"memory show bob --days 0": "agnx-lite memory: --days must be between 1 and 3650",
	} {
		code, _, errs := c.run(strings.Fields(args)...)
		assert.NotEqual(t, 0, code, args)
		assert.Contains(t, errs, want, args)
		if !strings.HasPrefix(errs, "agnx-lite memory:") {
			assert.Equal(t, 1, strings.Count(errs, "\n"), "one sentence: %s", errs)
		}
	}
}

// edit runs the editor on the file, creating it (with its head, for a
// daily log) when it is missing.
func TestCLI_MemoryEdit(t *testing.T) {
	c := newCLI(t)
	dir := memoryAgent(t, c, true)
	script := filepath.Join(t.TempDir(), "ed.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s\\n' \"$2\" >> \"$2\"\n"), 0o755))
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", script+" --flag")

	code, _, errs := c.run("memory", "edit", "bob")
	require.Equal(t, 0, code, errs)
	mem := filepath.Join(dir, "memory", "MEMORY.md")
	data, err := os.ReadFile(mem)
	require.NoError(t, err)
	assert.Equal(t, mem+"\n", string(data), "created empty, then edited")

	code, _, errs = c.run("memory", "edit", "bob", "--daily", "2026-01-02")
	require.Equal(t, 0, code, errs)
	day := filepath.Join(dir, "memory", "daily", "2026-01-02.md")
	data, err = os.ReadFile(day)
	require.NoError(t, err)
	assert.Equal(t, "# 2026-01-02\n"+day+"\n", string(data))

	code, _, errs = c.run("memory", "edit", "bob", "--world", "../People")
	require.Equal(t, 0, code, errs)
	assert.FileExists(t, filepath.Join(c.dir, "memory", "world", "---people.md"))

	code, _, errs = c.run("memory", "edit", "bob", "--daily", "yesterday")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `--daily "yesterday" is not a date`)

	t.Setenv("EDITOR", "false")
	code, _, errs = c.run("memory", "edit", "bob")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `the editor "false" did not finish well`)
}
