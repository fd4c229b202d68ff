package tasks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// finish fails the test if f has not returned within a generous bound: a
// board file that is a FIFO blocks an open for ever, which is what is
// tested.
func finish(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

// unblockFIFO opens the FIFO both ways at the test's end, which releases
// an open of it stuck waiting for a writer (the old code's failure), so
// that a failing test does not hang the run.
func unblockFIFO(t *testing.T, p string) {
	t.Cleanup(func() {
		if f, err := os.OpenFile(p, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
}

// A named pipe made as tasks/<board>.md is refused at once with a
// sentence; neither its board nor any other waits on it.
func TestFile_FIFOBlocksNoBoard(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.add(t, "on the default board")
	fifo := filepath.Join(r.dir, "ops.md")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	unblockFIFO(t, fifo)

	var syncErr error
	finish(t, "Sync of the FIFO's board", func() { syncErr = r.Sync(ctx, "ops") })
	var fe *FileError
	require.ErrorAs(t, syncErr, &fe)
	assert.Equal(t, "tasks/ops.md:1: "+notRegular, fe.Error())

	finish(t, "a change of another board", func() { r.add(t, "still works") })
	finish(t, "a change of the FIFO's board", func() {
		_, err := r.Add(ctx, ByPerson, Task{Board: "ops", Title: "the store stays the truth"})
		assert.NoError(t, err)
	})
	finish(t, "a list of every board", func() {
		list, err := r.List(ctx, Filter{})
		require.NoError(t, err)
		assert.Len(t, list, 3)
	})
	assert.Equal(t, fe.Error(), r.FileErr("ops").Error(), "shown beside the board until fixed")
	st, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.Equal(t, os.ModeNamedPipe, st.Mode().Type(), "a person's file is left as it is")
	assert.Empty(t, r.SyncAll(ctx)[1:], "only the FIFO's board reports a mistake")

	// Replaced by a plain file, the board is written again.
	require.NoError(t, os.Remove(fifo))
	require.NoError(t, r.Sync(ctx, "ops"))
	assert.Contains(t, r.file(t, "ops"), "the store stays the truth")
	assert.NoError(t, r.FileErr("ops"))
}

// A board file that is a link is refused, also to a plain file: the
// store neither reads nor writes through it.
func TestFile_LinkRefused(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	_, err := r.Add(ctx, ByPerson, Task{Board: "ops", Title: "one"})
	require.NoError(t, err)
	outside := filepath.Join(t.TempDir(), "elsewhere.md")
	require.NoError(t, os.WriteFile(outside, []byte(r.file(t, "ops")), 0o600))
	p := filepath.Join(r.dir, "ops.md")
	require.NoError(t, os.Remove(p))
	require.NoError(t, os.Symlink(outside, p))

	var fe *FileError
	require.True(t, errors.As(r.Sync(ctx, "ops"), &fe))
	assert.Contains(t, fe.Msg, "not a plain file")
	_, err = r.Add(ctx, ByPerson, Task{Board: "ops", Title: "two"})
	require.NoError(t, err)
	data, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "- T-2 two", "nothing written through the link")

	if err := syscall.Mknod(filepath.Join(r.dir, "dev.md"), syscall.S_IFCHR|0o600, 1<<8|3); err == nil {
		require.True(t, errors.As(r.Sync(ctx, "dev"), &fe), "a device (we run as root)")
		assert.Contains(t, fe.Msg, "not a plain file")
	}
}
