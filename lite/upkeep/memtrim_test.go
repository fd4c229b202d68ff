package upkeep

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/storage"
)

// The database's pages the reads mapped leave the resident set, and the
// data reads back the same afterwards, while writes go on.
func TestDropDB(t *testing.T) {
	if testenv.Emulated() {
		t.Skip("qemu-user keeps the guest's file mappings itself: madvise does not reach the host's page tables")
	}
	s, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	big := bytes.Repeat([]byte("x"), 3000)
	require.NoError(t, s.Update(func(tx *storage.Tx) error {
		require.NoError(t, tx.CreateSession("a", nil))
		for seq := uint64(1); seq <= 500; seq++ {
			require.NoError(t, tx.AppendEvent("a", seq, big))
		}
		return nil
	}))
	readAll := func() int {
		n := 0
		require.NoError(t, s.View(func(tx *storage.Tx) error {
			return tx.Events("a", 0, func(_ uint64, data []byte) error {
				require.Equal(t, big, data)
				n++
				return nil
			})
		}))
		return n
	}
	require.Equal(t, 500, readAll())
	before, err := dropDB(s)
	require.NoError(t, err)
	assert.Greater(t, before, int64(1<<20), "reading 1.5 MB of events mapped its pages")
	after, err := dropDB(s)
	require.NoError(t, err)
	assert.Less(t, after, before/4, "dropped: %d kB before, %d kB after", before>>10, after>>10)
	assert.Equal(t, 500, readAll(), "the data reads back the same")
	require.NoError(t, s.Update(func(tx *storage.Tx) error { return tx.AppendEvent("a", 501, big) }))
}
