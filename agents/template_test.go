package agents

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteTemplate_RoundTrip(t *testing.T) {
	root := filepath.Join(t.TempDir(), "agents") // created on demand
	dir, err := WriteTemplate(root, "helper-2")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "helper-2"), dir)

	a, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "helper-2", a.Name)
	assert.Equal(t, Model{Provider: "ollama", Name: "qwen3:1.7b", Temperature: a.Model.Temperature}, a.Model)
	assert.Equal(t, []ToolRef{{Type: "builtin", Name: "read_file"}, {Type: "builtin", Name: "list_dir"}}, a.Tools)
	assert.NotEmpty(t, a.Soul)
	prompt := a.RenderSystem(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	assert.Contains(t, prompt, "Today is 2026-01-02. You are helper-2.")
	assert.NotContains(t, prompt, "{{")

	entries, err := List(root)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "helper-2", entries[0].Name)
}

func TestWriteTemplate_DefaultName(t *testing.T) {
	dir, err := WriteTemplate(t.TempDir(), DefaultAgent)
	require.NoError(t, err)
	a, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, DefaultAgent, a.Name)
}

func TestWriteTemplate_RefusesExisting(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bob"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "bob", "mine.txt"), []byte("keep"), 0o644))
	_, err := WriteTemplate(root, "bob")
	require.Error(t, err)
	assert.Equal(t, "create agent: "+filepath.Join(root, "bob")+" already exists; choose another name or remove the folder", err.Error())
	b, err := os.ReadFile(filepath.Join(root, "bob", "mine.txt"))
	require.NoError(t, err)
	assert.Equal(t, "keep", string(b))
}

func TestWriteTemplate_BadName(t *testing.T) {
	_, err := WriteTemplate(t.TempDir(), "../evil")
	assert.EqualError(t, err, `create agent: name "../evil" may contain only letters, digits and hyphens`)
}
