package bwrap

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestArgs_WorkspaceReadOnly(t *testing.T) {
	a := Args(Policy{Workspace: "/ws", WorkspaceReadOnly: true}, "", []string{"true"})
	i := slices.Index(a, "/ws")
	require.Positive(t, i, "%v", a)
	assert.Equal(t, []string{"--ro-bind", "/ws", "/workspace"}, a[i-1:i+2])
	for j, w := range a {
		if w == "--bind" {
			assert.NotEqual(t, "/ws", a[j+1], "the workspace is bound read-only only")
		}
	}
}

// A read-only workspace can be read, not written, not even by a file the
// command makes; /tmp stays the command's own.
func TestRun_WorkspaceReadOnly(t *testing.T) {
	r, ws := sandbox(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "in.txt"), []byte("parent's\n"), 0o666))
	p := Policy{Workspace: ws, WorkspaceReadOnly: true}
	res := run(t, r, p, `cat in.txt; echo x > in.txt; echo rc=$?; echo y > new.txt; echo rc=$?; rm -f in.txt; `+
		`echo tmp > /tmp/t && cat /tmp/t`)
	assert.Contains(t, string(res.Output), "parent's\n")
	assert.Contains(t, string(res.Output), "Read-only file system")
	assert.NotContains(t, string(res.Output), "rc=0")
	assert.Contains(t, string(res.Output), "tmp\n", "/tmp is writable")
	data, err := os.ReadFile(filepath.Join(ws, "in.txt"))
	require.NoError(t, err)
	assert.Equal(t, "parent's\n", string(data))
	assert.NoFileExists(t, filepath.Join(ws, "new.txt"))
}

// Trust mode has no sandbox to make the workspace read-only: it refuses.
func TestRun_TrustRefusesReadOnly(t *testing.T) {
	ws := t.TempDir()
	r := &Runner{Trust: true}
	_, err := r.Run(context.Background(), Policy{Workspace: ws, WorkspaceReadOnly: true},
		[]string{"/bin/sh", "-c", "echo x > f"}, nil)
	require.ErrorIs(t, err, ErrTrustReadOnly)
	_, err = r.Start(context.Background(), Policy{Workspace: ws, WorkspaceReadOnly: true}, []string{"/bin/sh", "-c", "echo x > f"})
	require.ErrorIs(t, err, ErrTrustReadOnly)
	assert.NoFileExists(t, filepath.Join(ws, "f"))
}
