package wasmtools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// A call with a workspace override (a subagent in its parent's workspace)
// mounts that folder, read-only when the call is, even for a tool granted
// rw; a tool granted no workspace gets none.
func TestTool_RunWorkspaceOverride(t *testing.T) {
	own, parent := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(parent, "p.txt"), []byte("parent's"), 0o644))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(parent, "out")))
	run := func(tool *Tool, readOnly bool, args string) (string, bool) {
		t.Helper()
		ctx := runtime.WithCall(context.Background(), runtime.CallInfo{CallID: "c", Workspace: parent, ReadOnly: readOnly})
		res, err := tool.Run(ctx, []byte(args))
		require.NoError(t, err)
		return res.Content, res.IsError
	}
	rw := testtool(t, "workspace: rw\n", ToolOptions{Workspace: own})
	content, isErr := run(rw, true, `{"mode": "read", "file": "p.txt"}`)
	assert.False(t, isErr, content)
	assert.Equal(t, "parent's", content)
	content, isErr = run(rw, true, `{"mode": "write", "file": "new.txt"}`)
	assert.True(t, isErr, content)
	assert.NoFileExists(t, filepath.Join(parent, "new.txt"))
	assert.NoFileExists(t, filepath.Join(own, "new.txt"))
	content, isErr = run(rw, true, `{"mode": "read", "file": "out"}`)
	assert.True(t, isErr, "a link out of the override folder is refused: %s", content)

	content, isErr = run(rw, false, `{"mode": "write", "file": "new.txt"}`)
	assert.False(t, isErr, content)
	assert.FileExists(t, filepath.Join(parent, "new.txt"), "a writable override is written")

	none := testtool(t, "", ToolOptions{Workspace: own})
	content, isErr = run(none, false, `{"mode": "read", "file": "p.txt"}`)
	assert.True(t, isErr)
	assert.NotContains(t, content, "parent's")
}
