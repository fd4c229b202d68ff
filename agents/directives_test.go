package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoad_Directives(t *testing.T) {
	dir := writeAgent(t, map[string]string{
		FileName:                 header + skillModel,
		"directives/b-second.md": "Second directive",
		"directives/a-first.md":  "First directive",
		"directives/blank.md":    "  \n ",
		"directives/skip.txt":    "not markdown",
		"directives/huge.md":     strings.Repeat("x", maxDirectiveFile+1),
	})
	a, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, []Directive{{Name: "a-first", Text: "First directive"}, {Name: "b-second", Text: "Second directive"}}, a.Directives)
	require.Len(t, a.Warnings, 1)
	assert.Contains(t, a.Warnings[0], "huge.md: directive left out: it is larger than 16 KiB")
	assert.Contains(t, a.Files, filepath.Join(dir, "directives", "a-first.md"))

	shared := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(shared, "memory.md"), []byte("Shared."), 0o644))
	a.SharedDirectives, _ = LoadDirectives(shared)
	assert.Contains(t, a.RenderSystem(time.Now()), "## Directives\n- Shared.\n- First directive\n- Second directive\n")
}

func TestLoadDirectives_Bounds(t *testing.T) {
	dir := t.TempDir()
	for i := range maxDirectives + 2 {
		name := filepath.Join(dir, string(rune('a'+i/26))+string(rune('a'+i%26))+".md")
		require.NoError(t, os.WriteFile(name, []byte(strings.Repeat("y", 3<<10)), 0o644))
	}
	ds, warnings := LoadDirectives(dir)
	assert.Len(t, ds, maxDirectiveTotal/(3<<10), "the total bound comes first")
	assert.Contains(t, strings.Join(warnings, "\n"), "pass 64 KiB together")

	none, warnings := LoadDirectives(filepath.Join(dir, "missing"))
	assert.Empty(t, none)
	assert.Empty(t, warnings)
}
