package workers

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Limits bound what a job copies and reads: the workspace's copy, what
// the worker leaves in the staging, and the diff shown.
type Limits struct {
	MaxFiles int   // default 10,000
	MaxBytes int64 // default 200 MiB
	MaxDiff  int   // bytes of diff shown to the model; default 64 KiB
}

func (l Limits) withDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = 10_000
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = 200 << 20
	}
	if l.MaxDiff <= 0 {
		l.MaxDiff = 64 << 10
	}
	return l
}

// baseFile is a workspace file as copied: what approve checks is still
// there before it writes over or removes it.
type baseFile struct {
	Size int64       `json:"size"`
	Mode fs.FileMode `json:"mode"`
	Sum  []byte      `json:"sum"`
}

// manifest is the workspace's regular files as copied, by slash path.
type manifest map[string]baseFile

// stageResult is what a copy did.
type stageResult struct {
	base    manifest
	bytes   int64
	skipped []string // "path (symlink)", ...
}

const maxSkippedNamed = 20

// stage copies the workspace's regular files and folders into dst (made
// 0700), within lim. Symlinks and special files are skipped, never
// followed: the walk goes through os.Root, so nothing outside ws is
// read even if the tree changes under it.
func stage(ctx context.Context, ws, dst string, lim Limits, progress func(string)) (*stageResult, error) {
	src, err := os.OpenRoot(ws)
	if err != nil {
		return nil, fmt.Errorf("the workspace %s cannot be opened: %w", ws, err)
	}
	defer src.Close()
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return nil, fmt.Errorf("the staging folder cannot be made: %w", err)
	}
	out, err := os.OpenRoot(dst)
	if err != nil {
		return nil, fmt.Errorf("the staging folder cannot be opened: %w", err)
	}
	defer out.Close()
	res := &stageResult{base: manifest{}}
	err = fs.WalkDir(src.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		switch t := d.Type(); {
		case p == ".":
			return nil
		case t.IsDir():
			return out.Mkdir(p, 0o700)
		case t.IsRegular():
			return res.copyFile(src, out, p, lim, progress)
		default:
			res.skip(p, t)
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (r *stageResult) skip(p string, t fs.FileMode) {
	kind := "special file"
	if t&fs.ModeSymlink != 0 {
		kind = "symlink"
	} else if t&fs.ModeNamedPipe != 0 {
		kind = "fifo"
	}
	if len(r.skipped) < maxSkippedNamed {
		r.skipped = append(r.skipped, p+" ("+kind+")")
	} else if len(r.skipped) == maxSkippedNamed {
		r.skipped = append(r.skipped, "…")
	}
}

// errTooBig is the copy's or the scan's bound.
var errTooBig = errors.New("too big")

func (r *stageResult) copyFile(src, out *os.Root, p string, lim Limits, progress func(string)) error {
	if len(r.base) >= lim.MaxFiles {
		return fmt.Errorf("the workspace has over %d files: %w", lim.MaxFiles, errTooBig)
	}
	// O_NONBLOCK: a file swapped for a FIFO after the walk saw it must
	// not block the open; Stat below then skips it.
	in, err := src.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("copy %s: %w", p, err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return fmt.Errorf("copy %s: %w", p, err)
	}
	if !st.Mode().IsRegular() {
		r.skip(p, st.Mode().Type())
		return nil
	}
	if r.bytes+st.Size() > lim.MaxBytes {
		return fmt.Errorf("the workspace has over %d MiB of files: %w", lim.MaxBytes>>20, errTooBig)
	}
	w, err := out.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm()|0o600)
	if err != nil {
		return fmt.Errorf("copy %s: %w", p, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(in, lim.MaxBytes-r.bytes+1))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy %s: %w", p, err)
	}
	if r.bytes += n; r.bytes > lim.MaxBytes {
		return fmt.Errorf("the workspace has over %d MiB of files: %w", lim.MaxBytes>>20, errTooBig)
	}
	r.base[p] = baseFile{Size: n, Mode: st.Mode().Perm(), Sum: h.Sum(nil)}
	if len(r.base)%1000 == 0 && progress != nil {
		progress(fmt.Sprintf("copied %d files", len(r.base)))
	}
	return nil
}

// baseName is the manifest's file in a job's folder, beside work/ (so
// the worker, which sees only work/, cannot change it).
const baseName = "base.json"

func saveManifest(dir string, m manifest) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, baseName), data, 0o600)
}

func loadManifest(dir string) (manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, baseName))
	if err != nil {
		return nil, fmt.Errorf("the job's copy record is gone (%w): run the worker again", err)
	}
	m := manifest{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, errors.New("the job's copy record is unreadable: run the worker again")
	}
	return m, nil
}

// inside reports whether p is dir or below it.
func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
