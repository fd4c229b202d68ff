package storage

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
)

// The pages the reads mapped leave the resident set, and the data reads
// back the same afterwards, while writes go on.
func TestDropMapped(t *testing.T) {
	if testenv.Emulated() {
		t.Skip("qemu-user keeps the guest's file mappings itself: madvise does not reach the host's page tables")
	}
	s := MustOpen(t)
	big := bytes.Repeat([]byte("x"), 3000)
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.CreateSession("a", nil))
		for seq := uint64(1); seq <= 500; seq++ {
			require.NoError(t, tx.AppendEvent("a", seq, big))
		}
		return nil
	})
	readAll := func() int {
		n := 0
		view(t, s, func(tx *Tx) error {
			return tx.Events("a", 0, func(_ uint64, data []byte) error {
				require.Equal(t, big, data)
				n++
				return nil
			})
		})
		return n
	}
	require.Equal(t, 500, readAll())
	before, err := s.DropMapped()
	require.NoError(t, err)
	assert.Greater(t, before, int64(1<<20), "reading 1.5 MB of events mapped its pages")
	after, err := s.DropMapped()
	require.NoError(t, err)
	assert.Less(t, after, before/4, "dropped: %d kB before, %d kB after", before>>10, after>>10)
	assert.Equal(t, 500, readAll(), "the data reads back the same")
	update(t, s, func(tx *Tx) error { return tx.AppendEvent("a", 501, big) })
}
