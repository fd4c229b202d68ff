// Package storagetest damages agnx-lite database files the ways disks and
// people do, for the tests of every command that opens one: emptied, cut
// short, a page of garbage in the tree, both meta pages overwritten. It
// imports bbolt only to find a page the tree uses.
package storagetest

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// Damage names a way to damage a file; Damages lists them all.
type Damage struct {
	Name  string
	Apply func(t testing.TB, path string)
}

// Damages is every kind, for table tests.
var Damages = []Damage{
	{"empty", Empty},
	{"cut in half", CutInHalf},
	{"garbage page", GarbagePage},
	{"garbage meta pages", GarbageMeta},
}

// Empty truncates the file to 0 bytes.
func Empty(t testing.TB, path string) {
	t.Helper()
	require.NoError(t, os.Truncate(path, 0))
}

// CutInHalf truncates the file to half the size its pages use, as a copy
// or a disk that stopped midway leaves it. (The file may be longer than
// its pages; cutting only that tail would not be damage.)
func CutInHalf(t testing.TB, path string) {
	t.Helper()
	require.NoError(t, os.Truncate(path, UsedSize(t, path)/2))
}

// UsedSize is how many bytes of the file its pages use (its high-water
// mark); bbolt grows the file ahead of that.
func UsedSize(t testing.TB, path string) int64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	var used int64
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		used = tx.Size()
		return nil
	}))
	require.NoError(t, db.Close())
	return used
}

// GarbagePage overwrites a page the tree links to (the root page of the
// sessions bucket) with random bytes.
func GarbagePage(t testing.TB, path string) {
	t.Helper()
	off, n := SessionsPage(t, path)
	Overwrite(t, path, off, n)
}

// SessionsPage returns where the root page of the sessions bucket lies in
// the file (which must not be open for writing): every session lookup
// reads it.
func SessionsPage(t testing.TB, path string) (off int64, size int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	ps := db.Info().PageSize
	var page uint64
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte("sessions")); b != nil {
			page = uint64(b.Root())
		}
		return nil
	}))
	require.NoError(t, db.Close())
	require.NotZero(t, page, "the sessions bucket has a page of its own")
	return int64(page) * int64(ps), ps
}

// GarbageMeta overwrites both meta pages (the first two pages).
func GarbageMeta(t testing.TB, path string) {
	t.Helper()
	Overwrite(t, path, 0, 2*os.Getpagesize())
}

// Overwrite writes n random bytes at off, in place.
func Overwrite(t testing.TB, path string, off int64, n int) {
	t.Helper()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}
