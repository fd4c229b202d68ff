package workers

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// ErrWorkspaceChanged is why approve refused: a file the worker changed,
// added or deleted is no longer in the workspace what the copy saw.
var ErrWorkspaceChanged = errors.New("changed in the workspace since the worker started")

// conflicts returns the files of cs that the workspace no longer has as
// the copy saw them: a changed or deleted file whose content differs, an
// added file that now exists.
func conflicts(ws *os.Root, cs *changeSet, base manifest) []string {
	var out []string
	for _, c := range cs.changes {
		if c.Kind == Added {
			if _, err := ws.Lstat(c.Path); !errors.Is(err, fs.ErrNotExist) {
				out = append(out, c.Path)
			}
			continue
		}
		sum, err := hashFile(ws, c.Path)
		if err != nil || !bytes.Equal(sum, base[c.Path].Sum) {
			out = append(out, c.Path)
		}
	}
	return out
}

// apply writes the change set into the workspace: each new or changed
// file is written beside its place and renamed over it, deleted files
// are removed. Everything goes through os.Root: a symlink in the
// workspace cannot send a write outside it.
func apply(ws, staging *os.Root, cs *changeSet) error {
	for _, c := range cs.changes {
		var err error
		if c.Kind == Deleted {
			err = ws.Remove(c.Path)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		} else {
			err = copyInto(ws, staging, c)
		}
		if err != nil {
			return fmt.Errorf("apply %s: %w", c.Path, err)
		}
	}
	return nil
}

func copyInto(ws, staging *os.Root, c Change) error {
	if dir := path.Dir(c.Path); dir != "." {
		if err := ws.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	in, err := staging.Open(c.Path)
	if err != nil {
		return err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !st.Mode().IsRegular() {
		return errors.New("it is no longer a regular file in the staging")
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(path.Dir(c.Path), "."+path.Base(c.Path)+".agnx-"+hex.EncodeToString(rnd[:]))
	out, err := ws.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, c.Mode.Perm()|0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = ws.Rename(tmp, c.Path)
	}
	if err != nil {
		_ = ws.Remove(tmp)
	}
	return err
}

// listNames joins up to n names, with how many more.
func listNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
