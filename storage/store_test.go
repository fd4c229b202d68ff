package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// MustOpen opens a new store in a fresh temp dir and closes it at cleanup.
func MustOpen(t testing.TB) *Store {
	t.Helper()
	return mustOpenAt(t, filepath.Join(t.TempDir(), "agnx.db"), nil)
}

func mustOpenAt(t testing.TB, path string, opts *Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// rawBolt runs fn on the file through bbolt directly, as another program
// (or an older build) would.
func rawBolt(t *testing.T, path string, fn func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(fn))
	require.NoError(t, db.Close())
}

func rawVersion(t *testing.T, path string) uint64 {
	t.Helper()
	var v uint64
	rawBolt(t, path, func(btx *bolt.Tx) (err error) {
		v, err = schemaVersion(btx)
		return err
	})
	return v
}

func TestOpen_CreatesDirAndLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "agnx.db")
	s := mustOpenAt(t, path, nil)
	assert.Equal(t, path, s.Path())

	fi, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), fi.Mode().Perm())

	pid, err := os.ReadFile(path + ".pid")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(pid))

	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "second Close is harmless")
	assert.NoFileExists(t, path+".pid")
	assert.Equal(t, SchemaVersion, rawVersion(t, path))
}

func TestOpen_LockedInSameProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agnx.db")
	mustOpenAt(t, path, nil)

	start := time.Now()
	_, err := Open(path, &Options{LockTimeout: 50 * time.Millisecond})
	var le *LockedError
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, ErrLocked)
	assert.Equal(t, os.Getpid(), le.PID)
	assert.Less(t, time.Since(start), 2*time.Second)
	want := fmt.Sprintf("agnx-lite is already running (pid %d) and holds %s: stop it or use another --data-dir",
		os.Getpid(), path)
	assert.EqualError(t, err, want)

	// A read-only open is refused too while the writer holds the file.
	_, err = Open(path, &Options{ReadOnly: true, LockTimeout: time.Millisecond})
	assert.ErrorAs(t, err, &le)
}

func TestLockedError_UnknownPID(t *testing.T) {
	err := &LockedError{Path: "/d/agnx.db"}
	assert.EqualError(t, err, "another agnx-lite process holds /d/agnx.db: stop it or use another --data-dir")
	assert.Zero(t, readPID(filepath.Join(t.TempDir(), "missing.pid")))

	stale := filepath.Join(t.TempDir(), "stale.pid")
	require.NoError(t, os.WriteFile(stale, []byte("not a pid"), 0o600))
	assert.Zero(t, readPID(stale))
}

func TestOpen_ReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agnx.db")
	w, err := Open(path, nil)
	require.NoError(t, err)
	require.NoError(t, w.Update(func(tx *Tx) error { return tx.CreateSession("s1", []byte("m")) }))
	require.NoError(t, w.Close())

	r1 := mustOpenAt(t, path, &Options{ReadOnly: true})
	r2 := mustOpenAt(t, path, &Options{ReadOnly: true}) // shared lock: both fit
	for _, r := range []*Store{r1, r2} {
		require.NoError(t, r.View(func(tx *Tx) error {
			m, err := tx.Meta("s1")
			assert.Equal(t, []byte("m"), m)
			return err
		}))
	}
	assert.Error(t, r1.Update(func(tx *Tx) error { return tx.PutKV("k", nil) }))
	assert.NoFileExists(t, path+".pid", "a reader writes no pid file")

	_, err = Open(path, &Options{LockTimeout: time.Millisecond})
	assert.ErrorIs(t, err, ErrLocked, "a writer waits for readers")
}

func TestOpen_ReadOnlyMissingFile(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "none", "agnx.db"), &Options{ReadOnly: true})
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), "no database at ")
}

func TestOpen_Corrupt(t *testing.T) {
	garbage := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + 13)
		}
		return b
	}
	cases := map[string]func(t *testing.T, path string){
		"short garbage": func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, garbage(100), 0o600))
		},
		"page-sized garbage": func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, garbage(64<<10), 0o600))
		},
		"text file": func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte("agent: hello\nmodel: x\n"), 0o600))
		},
		"both meta pages zeroed": func(t *testing.T, path string) {
			s, err := Open(path, nil)
			require.NoError(t, err)
			require.NoError(t, s.Close())
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt(make([]byte, 2*os.Getpagesize()), 0)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		},
		"foreign bbolt file": func(t *testing.T, path string) {
			rawBolt(t, path, func(btx *bolt.Tx) error {
				_, err := btx.CreateBucket([]byte("widgets"))
				return err
			})
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agnx.db")
			damage(t, path)
			_, err := Open(path, &Options{LockTimeout: time.Millisecond})
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrCorrupt)
			assert.Regexp(t, `^(the database `+path+` is damaged \(.+\)|`+path+` is not an agnx-lite database): move it aside`, err.Error())
		})
	}
}

func TestOpen_NotWritable(t *testing.T) {
	// The sentence, whoever runs the test.
	err := openError("/srv/agnx/agnx.db", &fs.PathError{Op: "open", Path: "/srv/agnx/agnx.db", Err: syscall.EACCES}, false)
	assert.EqualError(t, err, "data dir /srv/agnx is not writable: fix its permissions or choose another with --data-dir")
	assert.ErrorIs(t, err, ErrNotWritable)
	assert.ErrorIs(t, err, syscall.EACCES)
	assert.ErrorIs(t, openError("/ro/agnx.db", syscall.EROFS, false), ErrNotWritable)

	if os.Geteuid() == 0 {
		t.Skip("root bypasses directory permissions")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(dir, 0o500))
	_, err = Open(filepath.Join(dir, "agnx.db"), nil)
	assert.EqualError(t, err, "data dir "+dir+" is not writable: fix its permissions or choose another with --data-dir")
	_, err = Open(filepath.Join(dir, "sub", "agnx.db"), nil)
	assert.ErrorIs(t, err, ErrNotWritable)
}

func TestDiskFull_Sentence(t *testing.T) {
	s := MustOpen(t)
	enospc := &fs.PathError{Op: "write", Path: s.Path(), Err: syscall.ENOSPC}
	for _, err := range []error{s.commitError(enospc), openError(s.Path(), enospc, false)} {
		assert.EqualError(t, err, "disk full while writing "+s.Path()+": free some space; nothing acknowledged was lost")
		assert.ErrorIs(t, err, ErrDiskFull)
		assert.ErrorIs(t, err, syscall.ENOSPC)
		var de *DiskFullError
		assert.ErrorAs(t, err, &de)
	}
	assert.ErrorIs(t, s.commitError(syscall.EDQUOT), ErrDiskFull)
	assert.NotErrorIs(t, s.commitError(syscall.EIO), ErrDiskFull)
}

func TestSchema_MigrateForward(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agnx.db")
	rawBolt(t, path, func(*bolt.Tx) error { return nil }) // an empty bbolt file: version 0
	s, err := Open(path, nil)
	require.NoError(t, err)
	require.NoError(t, s.Update(func(tx *Tx) error { return tx.CreateSession("s", nil) }))
	require.NoError(t, s.Close())
	assert.Equal(t, SchemaVersion, rawVersion(t, path))

	// A later build adds a step; the data written before survives.
	addWidgets := func(btx *bolt.Tx) error {
		_, err := btx.CreateBucket([]byte("widgets"))
		return err
	}
	s, err = open(path, nil, append(migrations[:], addWidgets))
	require.NoError(t, err)
	require.NoError(t, s.View(func(tx *Tx) error {
		_, err := tx.Meta("s")
		assert.NotNil(t, tx.btx.Bucket([]byte("widgets")))
		return err
	}))
	require.NoError(t, s.Close())
	assert.Equal(t, SchemaVersion+1, rawVersion(t, path))

	// This build refuses the newer file with one sentence.
	_, err = Open(path, nil)
	assert.ErrorIs(t, err, ErrSchemaTooNew)
	assert.EqualError(t, err, fmt.Sprintf("database %s was written by a newer agnx-lite (schema %d, this build knows %d): upgrade agnx-lite",
		path, SchemaVersion+1, SchemaVersion))
	_, err = Open(path, &Options{ReadOnly: true})
	assert.ErrorIs(t, err, ErrSchemaTooNew)
}

func TestSchema_FailedMigrationChangesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agnx.db")
	s, err := Open(path, nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	boom := func(btx *bolt.Tx) error {
		if _, err := btx.CreateBucket([]byte("half")); err != nil {
			return err
		}
		return fmt.Errorf("boom")
	}
	_, err = open(path, nil, append(migrations[:], boom))
	require.ErrorContains(t, err, fmt.Sprintf("migrate schema %d to %d: to schema %d: boom", SchemaVersion, SchemaVersion+1, SchemaVersion+1))
	assert.Equal(t, SchemaVersion, rawVersion(t, path))
	rawBolt(t, path, func(btx *bolt.Tx) error {
		assert.Nil(t, btx.Bucket([]byte("half")), "rolled back")
		return nil
	})
}

func TestSchema_ReadOnlyOlder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agnx.db")
	rawBolt(t, path, func(*bolt.Tx) error { return nil })
	_, err := Open(path, &Options{ReadOnly: true})
	var se *SchemaError
	require.ErrorAs(t, err, &se)
	assert.NotErrorIs(t, err, ErrSchemaTooNew)
	assert.Contains(t, err.Error(), "open it once without read-only to migrate it")
}

func TestSchema_BadVersionValue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agnx.db")
	rawBolt(t, path, func(btx *bolt.Tx) error {
		b, err := btx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		return b.Put(keySchemaVersion, binary.BigEndian.AppendUint32(nil, 1))
	})
	_, err := Open(path, nil)
	assert.ErrorIs(t, err, ErrCorrupt)
}

func TestStore_CheckAndStats(t *testing.T) {
	s := MustOpen(t)
	require.NoError(t, s.Update(func(tx *Tx) error {
		for i := range 3 {
			id := fmt.Sprintf("s%d", i)
			if err := tx.CreateSession(id, nil); err != nil {
				return err
			}
			if err := tx.AppendEvent(id, 1, []byte("e")); err != nil {
				return err
			}
		}
		return tx.SetActive("s1", true)
	}))
	require.NoError(t, s.Check())

	st, err := s.Stats()
	require.NoError(t, err)
	assert.Equal(t, 3, st.Sessions)
	assert.Equal(t, 1, st.ActiveSessions)
	assert.Positive(t, st.FileSize)
}

func TestStore_UpdateReturnsFnErrorUnchanged(t *testing.T) {
	s := MustOpen(t)
	sentinel := fmt.Errorf("mine")
	err := s.Update(func(tx *Tx) error {
		require.NoError(t, tx.PutKV("k", []byte("v")))
		return sentinel
	})
	assert.Same(t, sentinel, err)
	require.NoError(t, s.View(func(tx *Tx) error {
		v, err := tx.KV("k")
		assert.Nil(t, v, "rolled back")
		return err
	}))
}

// The file grows by at most growStep past the pages it holds (bbolt's
// default would leave it up to 16 MiB larger).
func TestStore_FileGrowsInSmallSteps(t *testing.T) {
	s := MustOpen(t)
	ev := bytes.Repeat([]byte("e"), 1000)
	seq := uint64(0)
	require.NoError(t, s.Update(func(tx *Tx) error { return tx.CreateSession("a", nil) }))
	for range 20 {
		require.NoError(t, s.Update(func(tx *Tx) error {
			for range 500 {
				seq++
				if err := tx.AppendEvent("a", seq, ev); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	var used int64
	require.NoError(t, s.db.View(func(btx *bolt.Tx) error { used = btx.Size(); return nil }))
	st, err := s.Stats()
	require.NoError(t, err)
	assert.Greater(t, used, int64(9<<20), "the events fill more than 9 MiB")
	assert.LessOrEqual(t, st.FileSize-used, int64(growStep+4096), "file %d bytes, %d in use", st.FileSize, used)
}
