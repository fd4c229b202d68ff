package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func workspace(t *testing.T) (ws, outside string) {
	t.Helper()
	dir := t.TempDir()
	ws = filepath.Join(dir, "ws")
	outside = filepath.Join(dir, "secret.txt")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "notes"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes", "todo.md"), []byte("one\ntwo\nthree\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "blob.bin"), []byte{1, 0, 2}, 0o644))
	require.NoError(t, os.WriteFile(outside, []byte("TOP SECRET"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "link")))
	require.NoError(t, os.Symlink(dir, filepath.Join(ws, "updir")))
	return ws, outside
}

func TestReadFile_Run(t *testing.T) {
	ws, outside := workspace(t)
	tool := &ReadFile{Workspace: ws}
	tests := []struct {
		name, args, want string
		isErr            bool
	}{
		{"whole file", `{"path":"notes/todo.md"}`, "one\ntwo\nthree\n", false},
		{"range", `{"path":"notes/todo.md","offset":2,"limit":1}`, "two\n", false},
		{"workspace prefix", `{"path":"/workspace/notes/todo.md"}`, "one\ntwo\nthree\n", false},
		{"missing", `{"path":"nope.txt"}`, "does not exist", true},
		{"dotdot", `{"path":"../secret.txt"}`, "outside the workspace", true},
		{"deep dotdot", `{"path":"notes/../../secret.txt"}`, "outside the workspace", true},
		{"absolute outside", `{"path":"` + outside + `"}`, "does not exist", true},
		{"symlink out", `{"path":"link"}`, "outside the workspace", true},
		{"dir symlink out", `{"path":"updir/secret.txt"}`, "outside the workspace", true},
		{"directory", `{"path":"notes"}`, "is a directory", true},
		{"binary", `{"path":"blob.bin"}`, "binary file", true},
		{"no path", `{}`, "path is required", true},
		{"bad json", `{"path":`, "failed to parse tool arguments", true},
		{"unknown field", `{"path":"a","mode":"x"}`, "failed to parse tool arguments", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Run(context.Background(), []byte(tt.args))
			require.NoError(t, err)
			assert.Equal(t, tt.isErr, res.IsError, res.Content)
			assert.Contains(t, res.Content, tt.want)
			assert.NotContains(t, res.Content, "TOP SECRET")
		})
	}
}

func TestReadFile_Large(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "big.txt"), []byte(strings.Repeat("x", maxReadBytes+10)), 0o644))
	res, err := (&ReadFile{Workspace: ws}).Run(context.Background(), []byte(`{"path":"big.txt"}`))
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Contains(t, res.Content, "read further with offset")
	assert.LessOrEqual(t, len(res.Content), maxReadBytes+200)
}

func TestListDir_Run(t *testing.T) {
	ws, _ := workspace(t)
	tool := &ListDir{Workspace: ws}

	res, err := tool.Run(context.Background(), nil)
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "blob.bin (3 bytes)\nlink (link)\nnotes/\nupdir (link)", res.Content)

	res, err = tool.Run(context.Background(), []byte(`{"path":"notes"}`))
	require.NoError(t, err)
	assert.Equal(t, "todo.md (14 bytes)", res.Content)

	for _, p := range []string{"..", "updir", "../..", "notes/../.."} {
		res, err = tool.Run(context.Background(), []byte(`{"path":"`+p+`"}`))
		require.NoError(t, err)
		assert.True(t, res.IsError, p)
		assert.Contains(t, res.Content, "outside the workspace", p)
	}
}

func TestListDir_Empty(t *testing.T) {
	res, err := (&ListDir{Workspace: t.TempDir()}).Run(context.Background(), []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, ". is empty", res.Content)
}
