package workers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// ChangeKind is what a worker did to a file.
type ChangeKind string

// The kinds of change.
const (
	Added   ChangeKind = "added"
	Changed ChangeKind = "changed"
	Deleted ChangeKind = "deleted"
)

// Change is one file of a change set, by slash path.
type Change struct {
	Path string      `json:"path"`
	Kind ChangeKind  `json:"kind"`
	Size int64       `json:"size"` // the new size; the old one for Deleted
	Mode fs.FileMode `json:"-"`
}

// changeSet is what the worker changed in the staging against the copy.
type changeSet struct {
	changes []Change
	skipped []string // symlinks and special files the worker left, not applied
}

// scan compares the staging dir with the manifest of the copy: regular
// files new, different (by size, then content) or gone. Symlinks and
// special files the worker made are named and never applied.
func scan(ctx context.Context, dir string, base manifest, lim Limits) (*changeSet, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("the staging folder cannot be opened: %w", err)
	}
	defer root.Close()
	cs := &changeSet{}
	seen := make(map[string]bool, len(base))
	files, total := 0, int64(0)
	skips := &stageResult{}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			skips.skip(p, d.Type())
			return nil
		}
		if files++; files > lim.MaxFiles {
			return fmt.Errorf("the worker left over %d files: %w", lim.MaxFiles, errTooBig)
		}
		if info, err := d.Info(); err == nil {
			if total += info.Size(); total > lim.MaxBytes {
				return fmt.Errorf("the worker left over %d MiB of files: %w", lim.MaxBytes>>20, errTooBig)
			}
		}
		c, err := compare(root, p, base)
		if err != nil {
			return err
		}
		seen[p] = true
		if c != nil {
			cs.changes = append(cs.changes, *c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for p, b := range base {
		if !seen[p] {
			cs.changes = append(cs.changes, Change{Path: p, Kind: Deleted, Size: b.Size, Mode: b.Mode})
		}
	}
	slices.SortFunc(cs.changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	cs.skipped = skips.skipped
	return cs, nil
}

// compare returns p's change against base, nil when it is the same.
func compare(root *os.Root, p string, base manifest) (*Change, error) {
	st, err := root.Lstat(p)
	if err != nil {
		return nil, fmt.Errorf("read %s in the staging: %w", p, err)
	}
	mode := st.Mode().Perm()
	b, ok := base[p]
	switch {
	case !ok:
		return &Change{Path: p, Kind: Added, Size: st.Size(), Mode: mode}, nil
	case b.Size != st.Size() || b.Mode&0o100 != mode&0o100:
		return &Change{Path: p, Kind: Changed, Size: st.Size(), Mode: mode}, nil
	}
	sum, err := hashFile(root, p)
	if err != nil {
		return nil, fmt.Errorf("read %s in the staging: %w", p, err)
	}
	if bytes.Equal(sum, b.Sum) {
		return nil, nil
	}
	return &Change{Path: p, Kind: Changed, Size: st.Size(), Mode: mode}, nil
}

// hashFile is the sha256 of a regular file under root; anything else is
// an error (a FIFO never blocks the open).
func hashFile(root *os.Root, p string) ([]byte, error) {
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
