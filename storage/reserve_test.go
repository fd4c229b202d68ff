package storage_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
	"github.com/agnx-lite/agnx-lite/storage/storagetest"
)

func appendOne(s *storage.Store, seq uint64, size int) error {
	return s.Update(func(tx *storage.Tx) error {
		return tx.AppendEvent("s", seq, bytes.Repeat([]byte{'m'}, size))
	})
}

// A workspace fills the disk: the next message still commits, with the
// reserve's space; ReserveGone says so until space is freed, then the
// reserve is made again.
func TestUpdate_DiskFullUsesTheReserve(t *testing.T) {
	disk := storagetest.TinyDisk(t, "1m")
	path := filepath.Join(disk, "agnx.db")
	s, err := storage.Open(path, &storage.Options{ReserveBytes: 256 << 10})
	require.NoError(t, err)
	defer s.Close()
	require.FileExists(t, path+".reserve")
	require.False(t, s.ReserveGone())
	require.NoError(t, s.Update(func(tx *storage.Tx) error { return tx.CreateSession("s", nil) }))
	require.NoError(t, appendOne(s, 1, 100))

	storagetest.Fill(t, filepath.Join(disk, "workspace-file"))
	require.NoError(t, appendOne(s, 2, 40<<10), "the message commits with the reserve's space")
	assert.True(t, s.ReserveGone(), "tools that write can see the reserve is gone")
	assert.NoFileExists(t, path+".reserve")

	// Once the reserve is spent, a full disk is one sentence again, and
	// nothing of the failed batch is stored.
	storagetest.Fill(t, filepath.Join(disk, "workspace-file2"))
	err = appendOne(s, 3, 200<<10)
	require.ErrorIs(t, err, storage.ErrDiskFull)
	assert.Equal(t, "disk full while writing "+path+": free some space; nothing acknowledged was lost", err.Error())
	require.NoError(t, s.View(func(tx *storage.Tx) error {
		last, err := tx.LastSeq("s")
		assert.Equal(t, uint64(2), last)
		return err
	}))

	require.NoError(t, os.Remove(filepath.Join(disk, "workspace-file")))
	require.NoError(t, os.Remove(filepath.Join(disk, "workspace-file2")))
	require.NoError(t, appendOne(s, 3, 100))
	assert.False(t, s.ReserveGone(), "the reserve is back once there is room")
	fi, err := os.Stat(path + ".reserve")
	require.NoError(t, err)
	assert.Equal(t, int64(256<<10), fi.Size())
}
