package memory

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
	"time"
)

// EnsureMemory makes sure MEMORY.md exists (empty when new) and is a
// regular file inside the agent's folder, and returns its path: what a
// person's editor opens.
func (b *Bank) EnsureMemory() (string, error) {
	root, err := b.openAgent()
	if err != nil {
		return "", err
	}
	defer root.Close()
	if err := root.MkdirAll(Dir, 0o755); err != nil {
		return "", err
	}
	return b.MemoryPath(), ensure(root, Dir+"/"+MemoryFile, nil, b.MemoryPath())
}

// EnsureDaily makes sure the daily file of day exists (with its "# date"
// head when new) and returns its path.
func (b *Bank) EnsureDaily(day time.Time) (string, error) {
	root, rel, head, err := b.openDaily(day)
	if err != nil {
		return "", err
	}
	defer root.Close()
	return b.DailyPath(day), ensure(root, rel, head, b.DailyPath(day))
}

// EnsureWorld makes sure the world file of topic (sanitised) exists and
// returns its path.
func (b *Bank) EnsureWorld(topic string) (string, error) {
	p, err := b.WorldPath(topic)
	if err != nil {
		return "", err
	}
	root, err := b.openWorld(true)
	if err != nil {
		return "", err
	}
	defer root.Close()
	return p, ensure(root, filepath.Base(p), nil, p)
}

// ensure creates rel holding head unless it exists (under its folder's
// lock, as appendEntry), and checks that it is a regular file reached
// without leaving root.
func ensure(root *os.Root, rel string, head []byte, abs string) error {
	f, _, err := openRegular(root, rel, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createLocked(root, rel, head); err != nil {
			return pathErr(abs, err)
		}
		f, _, err = openRegular(root, rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	}
	if err != nil {
		return pathErr(abs, err)
	}
	return f.Close()
}

// createLocked is createWith under the lock of rel's folder.
func createLocked(root *os.Root, rel string, head []byte) error {
	unlock, err := lockDir(root, path.Dir(rel))
	if err != nil {
		return err
	}
	defer unlock()
	return createWith(root, rel, head)
}
