package agents

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path"
	"syscall"
)

// WriteInside replaces the file name of root (a slash path, which may be
// in a subfolder) with data atomically: a temporary file beside it is
// written and synced, renamed over it, and the folder is synced, so a
// crash leaves the old file or the new one. The file keeps its
// permissions; a new one is 0600. It is how agnx-lite rewrites files a
// person also edits (policy.local.yaml, MEMORY.md, world memory).
func WriteInside(root *os.Root, name string, data []byte) error {
	perm := fs.FileMode(0o600)
	if st, err := root.Lstat(name); err == nil && st.Mode().IsRegular() {
		perm = st.Mode().Perm()
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	dir := path.Dir(name)
	tmp := path.Join(dir, "."+path.Base(name)+".tmp-"+hex.EncodeToString(b[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return err
	}
	d, err := root.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
