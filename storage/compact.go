package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// CompactReport says what Compact did: the file's size before and after.
type CompactReport struct {
	Before, After int64
}

// compactTxMax bounds what one transaction of the copy holds (bytes of
// keys and values): the copy commits every few MiB, so it needs little
// memory whatever the size of the file.
const compactTxMax = 4 << 20

// compactHooks are test seams: called at each step of Compact, a non-nil
// error stops it there, as a crash would.
type compactHooks struct {
	copied, checked, renamed func() error // after the fsynced copy, its check, the rename
}

// Compact rewrites the database at path without its free pages: bbolt
// reuses freed pages but never gives them back to the file system. It
// needs the file to itself (a *LockedError while the daemon holds it),
// copies every bucket, schema version included, into <path>.compact in
// the same folder, fsyncs it, opens the copy and checks it as Open and
// Check do, renames it over path and fsyncs the folder. A crash at any
// point leaves either the old file or the new one whole at path; a copy
// left behind is removed by the next Compact.
func Compact(path string) (CompactReport, error) {
	return compact(filepath.Clean(path), compactHooks{})
}

func compact(path string, hooks compactHooks) (CompactReport, error) {
	var rep CompactReport
	fi, err := os.Stat(path)
	if err != nil {
		return rep, fmt.Errorf("no database at %s to compact: %w", path, err)
	}
	rep.Before = fi.Size()
	if err := verify(path, (*Options)(nil).withDefaults()); err != nil {
		return rep, err
	}
	// Held for writing: nobody opens it meanwhile, and its lock outlives the
	// rename (the lock is on the old file, which nobody can open by then).
	src, err := openBolt(path, &bolt.Options{Timeout: 200 * time.Millisecond, NoFreelistSync: true,
		FreelistType: bolt.FreelistMapType})
	if err != nil {
		return rep, openError(path, err, false)
	}
	defer src.Close()
	tmp := path + ".compact"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return rep, fmt.Errorf("remove the copy %s a compaction left: %w", tmp, err)
	}
	if err := copyCompact(src, tmp); err != nil {
		_ = os.Remove(tmp)
		return rep, err
	}
	for _, step := range []func() error{hooks.copied, func() error { return checkCopy(tmp) }, hooks.checked} {
		if step == nil {
			continue
		}
		if err := step(); err != nil {
			_ = os.Remove(tmp)
			return rep, err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return rep, fmt.Errorf("put the compacted copy in place of %s: %w", path, err)
	}
	if hooks.renamed != nil {
		if err := hooks.renamed(); err != nil {
			return rep, err
		}
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return rep, err
	}
	if fi, err := os.Stat(path); err == nil {
		rep.After = fi.Size()
	}
	return rep, nil
}

// copyCompact writes src's buckets into a new file at dst and fsyncs it.
func copyCompact(src *bolt.DB, dst string) error {
	out, err := bolt.Open(dst, 0o600, &bolt.Options{Timeout: 200 * time.Millisecond, NoSync: true,
		NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return openError(dst, err, false)
	}
	err = bolt.Compact(out, src, compactTxMax)
	if err == nil {
		err = out.Sync() // the commits above skipped fsync: one for all
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if isDiskFull(err) {
			return &DiskFullError{Path: dst, Err: err}
		}
		return fmt.Errorf("copy the database into %s: %w", dst, err)
	}
	return nil
}

// checkCopy opens the copy as Open does (its pages walked, its schema
// read) and runs bbolt's consistency check on it.
func checkCopy(path string) error {
	st, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("the compacted copy does not open (%w): the database was left as it was", err)
	}
	err = st.Check()
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("the compacted copy fails its check (%w): the database was left as it was", err)
	}
	return nil
}

// SyncDir fsyncs a folder, so that a file created or renamed in it
// survives a power cut.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync the folder %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync the folder %s: %w", dir, err)
	}
	return nil
}
