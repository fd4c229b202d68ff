package memory

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
)

// IndexedSeq follows what each search has read of a session, for
// retention that must not discard what the index has not seen.
func TestIndexedSeq(t *testing.T) {
	b := newFiles(t)
	db := openTestDB(t, filepath.Join(t.TempDir(), "agnx.db"))
	x := newTestIndex(t, b, db, nil)
	read := func(agent, sid string) uint64 {
		var n uint64
		require.NoError(t, db.View(func(tx *storage.Tx) (err error) { n, err = IndexedSeq(tx, agent, sid); return }))
		return n
	}
	assert.Zero(t, read("ada", "s1"), "no index yet")
	db.say("s1", "ada", "one", "two", "three")
	search(t, x, "one")
	assert.Equal(t, uint64(3), read("ada", "s1"))
	db.say("s1", "ada", "four")
	assert.Equal(t, uint64(3), read("ada", "s1"), "not read until the next search")
	search(t, x, "four")
	assert.Equal(t, uint64(4), read("ada", "s1"))
	assert.Zero(t, read("bob", "s1"), "another agent's index")
}
