package tools

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*.md", "a.md", true},
		{"*.md", "dir/a.md", false},
		{"**/*.md", "a.md", true},
		{"**/*.md", "x/y/a.md", true},
		{"x/**", "x/y/z", true},
		{"x/**/z", "x/z", true},
		{"x/**/z", "x/a/b/z", true},
		{"x/**/z", "y/a/z", false},
		{"?.go", "a.go", true},
		{"[ab].go", "c.go", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, MatchGlob(tt.pattern, tt.name), "%s ~ %s", tt.pattern, tt.name)
	}
}

func searchWorkspace(t *testing.T) string {
	ws := t.TempDir()
	files := map[string]string{
		"README.md":          "# Project\nTODO: write docs\n",
		"src/main.go":        "package main\n// TODO fix\nfunc main() {}\n",
		"src/util/util.go":   "package util\n",
		"notes/2024/jan.md":  "todo: buy milk\n",
		".git/config":        "TODO hidden\n",
		"bin/blob":           "TODO\x00binary",
		"src/util/strings.t": "nothing",
	}
	for p, c := range files {
		full := filepath.Join(ws, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	return ws
}

func TestGlob_Run(t *testing.T) {
	ws := searchWorkspace(t)
	tool := &Glob{Workspace: ws}
	res, err := tool.Run(context.Background(), []byte(`{"pattern":"**/*.go"}`))
	require.NoError(t, err)
	assert.Equal(t, "src/main.go\nsrc/util/util.go", res.Content)

	res, _ = tool.Run(context.Background(), []byte(`{"pattern":"*.md","path":"notes/2024"}`))
	assert.Equal(t, "notes/2024/jan.md", res.Content)

	res, _ = tool.Run(context.Background(), []byte(`{"pattern":"*.rs"}`))
	assert.Equal(t, "no files match *.rs", res.Content)

	res, _ = tool.Run(context.Background(), []byte(`{"pattern":"[","path":"."}`))
	assert.True(t, res.IsError)
	res, _ = tool.Run(context.Background(), []byte(`{"pattern":"*","path":"../"}`))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "outside the workspace")
}

func TestGrep_Run(t *testing.T) {
	ws := searchWorkspace(t)
	tool := &Grep{Workspace: ws}
	res, err := tool.Run(context.Background(), []byte(`{"pattern":"TODO"}`))
	require.NoError(t, err)
	assert.Equal(t, "README.md:2: TODO: write docs\nsrc/main.go:2: // TODO fix", res.Content,
		"skips .git and binary files")

	res, _ = tool.Run(context.Background(), []byte(`{"pattern":"todo","ignore_case":true,"include":"**/*.md"}`))
	assert.Equal(t, "README.md:2: TODO: write docs\nnotes/2024/jan.md:1: todo: buy milk", res.Content)

	res, _ = tool.Run(context.Background(), []byte(`{"pattern":"(unclosed"}`))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "not a valid regular expression")
}

// TestWalk_OneRootPerCall: walk goes over the folder its caller opened,
// not whatever the workspace's path names by the time it starts, so grep
// reads the files in the folder it walked.
func TestWalk_OneRootPerCall(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "sub", "a.txt"), []byte("a"), 0o644))
	root, err := os.OpenRoot(ws)
	require.NoError(t, err)
	defer root.Close()
	require.NoError(t, os.Rename(ws, filepath.Join(dir, "moved")))
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "planted.txt"), []byte("p"), 0o644))

	var seen []string
	require.NoError(t, walk(context.Background(), root, ".", func(p string, _ fs.DirEntry) error {
		seen = append(seen, p)
		return nil
	}))
	assert.Equal(t, []string{"sub/a.txt"}, seen)
}
