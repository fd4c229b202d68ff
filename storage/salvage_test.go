package storage_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/agnx-lite/agnx-lite/storage"
	"github.com/agnx-lite/agnx-lite/storage/storagetest"
)

// Salvage copies what is readable into a file that opens clean; what it
// cannot read at all (no meta page left) it says so.
func TestSalvage(t *testing.T) {
	cases := map[string]struct {
		recovers bool
		min      int // sessions copied, whole or in part
	}{
		"empty":              {recovers: false},
		"garbage meta pages": {recovers: false},
		// bbolt writes new pages at the end: the list of sessions is in the
		// half cut off, or is the garbage page, so none is found.
		"cut in half":  {recovers: true},
		"garbage page": {recovers: true},
		"undamaged":    {recovers: true, min: 40},
	}
	damages := append([]storagetest.Damage{{Name: "undamaged", Apply: func(testing.TB, string) {}}}, storagetest.Damages...)
	for _, d := range damages {
		t.Run(d.Name, func(t *testing.T) {
			want := cases[d.Name]
			path, _ := damagedFixture(t)
			d.Apply(t, path)
			dst := storage.SalvagePath(path)
			rep, err := storage.Salvage(path, dst)
			if !want.recovers {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "nothing can be recovered")
				assert.NoFileExists(t, dst)
				return
			}
			require.NoError(t, err)
			t.Logf("%+v", rep)
			assert.GreaterOrEqual(t, rep.Sessions+rep.Partial, want.min)
			assert.Equal(t, d.Name != "undamaged", rep.Unlisted)
			s, err := storage.Open(dst, nil)
			require.NoError(t, err, "the copy opens clean")
			defer s.Close()
			require.NoError(t, readAll(s))
			if d.Name == "undamaged" {
				assert.Equal(t, storage.SalvageReport{Sessions: 40, Events: rep.Events, KV: 6}, rep)
			}
		})
	}
}

// The common damage, a bad sector under one session's events: every other
// session is copied whole, and that one up to the damage.
func TestSalvage_OneSessionDamaged(t *testing.T) {
	path, _ := damagedFixture(t)
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	var page uint64
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		page = uint64(tx.Bucket([]byte("sessions")).Bucket([]byte("session-013")).Bucket([]byte("events")).Root())
		return nil
	}))
	ps := db.Info().PageSize
	require.NoError(t, db.Close())
	require.NotZero(t, page)
	storagetest.Overwrite(t, path, int64(page)*int64(ps), ps)
	_, err = storage.Open(path, nil)
	require.ErrorIs(t, err, storage.ErrCorrupt)

	dst := storage.SalvagePath(path)
	rep, err := storage.Salvage(path, dst)
	require.NoError(t, err)
	assert.Equal(t, 39, rep.Sessions)
	assert.Equal(t, 1, rep.Partial)
	assert.False(t, rep.Unlisted)
	s, err := storage.Open(dst, nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, readAll(s))
}

// A file another process holds is not lost: Salvage says who holds it
// instead of "nothing can be recovered".
func TestSalvage_HeldFile(t *testing.T) {
	src := filepath.Join(t.TempDir(), "agnx.db")
	st, err := storage.Open(src, nil)
	require.NoError(t, err)
	defer st.Close()
	_, err = storage.Salvage(src, src+".recovered")
	var locked *storage.LockedError
	require.ErrorAs(t, err, &locked)
	assert.NotContains(t, err.Error(), "nothing can be recovered")
	assert.NoFileExists(t, src+".recovered")
}

// The index space (search indexes, schedules, the usage ledger) comes
// along, table by table, also past one chunk.
func TestSalvage_IndexSpace(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "agnx.db")
	s, err := storage.Open(src, nil)
	require.NoError(t, err)
	want := map[string]int{"usage/calls": 1300, "usage/days": 3, "sched/schedules": 2}
	require.NoError(t, s.Update(func(tx *storage.Tx) error {
		for table, n := range want {
			scope, kind, _ := strings.Cut(table, "/")
			for i := range n {
				if err := tx.IndexPut(scope, kind, []byte(fmt.Sprintf("k%05d", i)), []byte(fmt.Sprintf("v%d", i))); err != nil {
					return err
				}
			}
		}
		return nil
	}))
	require.NoError(t, s.Close())

	dst := storage.SalvagePath(src)
	rep, err := storage.Salvage(src, dst)
	require.NoError(t, err)
	assert.Equal(t, 1305, rep.Index)
	out, err := storage.Open(dst, nil)
	require.NoError(t, err)
	defer out.Close()
	require.NoError(t, out.View(func(tx *storage.Tx) error {
		for table, n := range want {
			scope, kind, _ := strings.Cut(table, "/")
			got := 0
			if err := tx.IndexScan(scope, kind, nil, func(k, v []byte) error {
				i, err := strconv.Atoi(string(k[1:]))
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("v%d", i), string(v), "%s %s", table, k)
				got++
				return nil
			}); err != nil {
				return err
			}
			assert.Equal(t, n, got, table)
		}
		return nil
	}))
}
