package memory

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Bounds on what the bank reads and writes. Memory files are plain files
// a person (or anything else) may change, so each read is bounded.
const (
	// MaxFileBytes is the largest memory file read or appended to.
	MaxFileBytes = 1 << 20
	// MaxContentBytes is the most one remember, reflect or update_world
	// may write.
	MaxContentBytes = 64 << 10
	// MaxRecallBytes caps what a recall returns; past it the output is
	// cut and says so.
	MaxRecallBytes = 64 << 10
	// maxDirNames is how many names of a folder (world/, daily/) are read.
	maxDirNames = 4096
)

// Errors of the bank's file access; the tool turns them into sentences.
var (
	// ErrNotRegular is returned for a memory file that is a named pipe, a
	// device, a socket or a folder: reading one could block forever.
	ErrNotRegular = errors.New("is not a regular file")
	// ErrTooLarge is returned for a memory file over MaxFileBytes.
	ErrTooLarge = fmt.Errorf("is larger than %d KiB", MaxFileBytes>>10)
	// ErrHardLinked is returned when a file to be appended to has other
	// hard links, which may name a file outside the bank.
	ErrHardLinked = errors.New("has other hard links")
)

// openRegular opens p inside root only if it is a regular file, without
// ever blocking: O_NONBLOCK makes opening a FIFO return at once, and the
// check is made on the open descriptor, so a file swapped for a FIFO
// between a check and the open is still refused.
func openRegular(root *os.Root, p string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(p, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, perm)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ENODEV) {
			return nil, nil, ErrNotRegular
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = ErrNotRegular
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// readFile reads the regular file p of root, of at most MaxFileBytes.
// A missing file gives fs.ErrNotExist.
func readFile(root *os.Root, p string) ([]byte, error) {
	f, st, err := openRegular(root, p, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > MaxFileBytes {
		return nil, ErrTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes { // it grew since the stat
		return nil, ErrTooLarge
	}
	return data, nil
}

// listMarkdown returns the sorted *.md names of the folder dir of root,
// leaving out hidden ones; a missing folder has none.
func listMarkdown(root *os.Root, dir string) ([]string, error) {
	f, err := root.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names, err := f.Readdirnames(maxDirNames)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	names = slices.DeleteFunc(names, func(n string) bool { return !strings.HasSuffix(n, ".md") || strings.HasPrefix(n, ".") })
	slices.Sort(names)
	return names, nil
}

// writeAtomic replaces the file p of root with data (agents.WriteInside:
// a crash leaves either the old file or the new one). A p that exists
// and is not a regular file (a folder, a FIFO) is refused.
func writeAtomic(root *os.Root, p string, data []byte) error {
	if st, err := root.Lstat(p); err == nil && !st.Mode().IsRegular() && st.Mode()&fs.ModeSymlink == 0 {
		return ErrNotRegular
	}
	return agents.WriteInside(root, p, data)
}

// syncDir makes a rename or a new name in the folder dir durable.
func syncDir(root *os.Root, dir string) error {
	f, err := root.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// appendEntry appends entry to the file p of root with one O_APPEND write
// and syncs it; a p that does not exist is first created holding head.
// Both happen under an exclusive lock on p's folder (lockDir), which
// every writer of the bank takes, in this process or another: so the
// head is written once however many writers race, and no entry lands
// before it.
func appendEntry(root *os.Root, p string, head, entry []byte) error {
	unlock, err := lockDir(root, path.Dir(p))
	if err != nil {
		return err
	}
	defer unlock()
	if err := createWith(root, p, head); err != nil {
		return err
	}
	f, st, err := openRegular(root, p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return ErrHardLinked
	}
	if st.Size()+int64(len(entry)) > MaxFileBytes {
		return ErrTooLarge
	}
	if _, err := f.Write(entry); err != nil {
		return err
	}
	return f.Sync()
}

// lockDir takes an exclusive flock on the folder dir of root and returns
// its release. The lock is on the open folder, so two opens in one
// process exclude each other as two processes do.
func lockDir(root *os.Root, dir string) (func(), error) {
	f, err := root.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing the last descriptor releases the lock
}

// createWith creates p holding data, unless p exists; the caller holds
// the lock of p's folder (lockDir), so no writer sees p before its data.
func createWith(root *os.Root, p string, data []byte) error {
	f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
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
	if err != nil {
		root.Remove(p)
		return err
	}
	return syncDir(root, path.Dir(p))
}
