package storage_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
	"github.com/agnx-lite/agnx-lite/storage/storagetest"
)

// damagedFixture writes a file with a tree several levels deep: many
// sessions, events that span overflow pages, empty (inline) buckets, KV.
func damagedFixture(t *testing.T) (path string, good []byte) {
	path = filepath.Join(t.TempDir(), "agnx.db")
	s, err := storage.Open(path, &storage.Options{NoSync: true})
	require.NoError(t, err)
	for i := range 40 {
		id := fmt.Sprintf("session-%03d", i)
		require.NoError(t, s.Update(func(tx *storage.Tx) error {
			if err := tx.CreateSession(id, []byte(`{"agent":"a"}`)); err != nil {
				return err
			}
			for seq := uint64(1); seq <= uint64(i%7)*3; seq++ {
				n := 150
				if seq%6 == 0 {
					n = 5000 // spans an overflow page
				}
				ev := bytes.Repeat([]byte{'e'}, n)
				if err := tx.AppendEvent(id, seq, ev); err != nil {
					return err
				}
			}
			if i%7 > 0 {
				return tx.PutCheckpoint(id, 1, []byte("state"))
			}
			return tx.PutKV("cursor/"+id, []byte("1"))
		}))
	}
	require.NoError(t, s.Close())
	good, err = os.ReadFile(path)
	require.NoError(t, err)
	return path, good
}

// readAll reads everything a command could: sessions, events,
// checkpoints, KV, the consistency check, and a write.
func readAll(s *storage.Store) error {
	err := s.View(func(tx *storage.Tx) error {
		return tx.Sessions(func(id string, _ []byte) error {
			if _, _, err := tx.LatestCheckpoint(id); err != nil {
				return err
			}
			return tx.Events(id, 0, func(uint64, []byte) error { return nil })
		})
	})
	return errors.Join(err, s.Check(), s.Update(func(tx *storage.Tx) error {
		return tx.PutKV("probe", []byte("x"))
	}))
}

// Every kind of damage is refused at Open with one sentence, the file
// untouched: never a panic, never a fresh database over a lost one.
func TestOpen_DamagedFileRefused(t *testing.T) {
	for _, d := range storagetest.Damages {
		for _, ro := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/readonly=%v", d.Name, ro), func(t *testing.T) {
				path, _ := damagedFixture(t)
				d.Apply(t, path)
				before, err := os.ReadFile(path)
				require.NoError(t, err)
				_, err = storage.Open(path, &storage.Options{ReadOnly: ro})
				require.Error(t, err)
				assert.ErrorIs(t, err, storage.ErrCorrupt)
				assert.Regexp(t, `^the database `+path+` is damaged \(.+\): move it aside and restore a backup`, err.Error())
				assert.NotContains(t, err.Error(), "\n")
				after, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, before, after, "the damaged file is left as it was")
			})
		}
	}
}

// Garbage on any one page, then random byte flips: Open refuses the file
// or opens it, and whatever is read after never panics (a panic in bbolt's
// own goroutine would end this test binary).
func TestOpen_GarbageAnywhereNeverPanics(t *testing.T) {
	path, good := damagedFixture(t)
	ps := os.Getpagesize()
	rng := rand.New(rand.NewPCG(1, 2))
	refused := 0
	try := func(damage func(b []byte)) {
		b := bytes.Clone(good)
		damage(b)
		require.NoError(t, os.WriteFile(path, b, 0o600))
		s, err := storage.Open(path, &storage.Options{NoSync: true})
		if err != nil {
			require.ErrorIs(t, err, storage.ErrCorrupt)
			refused++
			return
		}
		if err := readAll(s); err != nil && !errors.Is(err, storage.ErrCorrupt) {
			assert.NotContains(t, err.Error(), "panic", "a panic is reported as damage")
		}
		require.NoError(t, s.Close())
	}
	pages := int(storagetest.UsedSize(t, path)) / ps // the file may be longer than its pages
	for p := 2; p < pages; p++ {
		try(func(b []byte) {
			for i := p * ps; i < (p+1)*ps; i++ {
				b[i] = byte(rng.Uint32())
			}
		})
	}
	for range 150 {
		try(func(b []byte) {
			for range 1 + rng.IntN(8) {
				b[2*ps+rng.IntN((pages-2)*ps)] = byte(rng.Uint32())
			}
		})
	}
	t.Logf("%d pages and 150 random flips: %d opens refused", pages-2, refused)
	assert.Positive(t, refused)
}

// A 0-byte file is refused rather than laid out afresh, read-only or not.
func TestOpen_EmptyFileNotReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agnx.db")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	_, err := storage.Open(path, nil)
	require.ErrorIs(t, err, storage.ErrCorrupt)
	assert.True(t, strings.Contains(err.Error(), "empty"), err.Error())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, fi.Size())
}
