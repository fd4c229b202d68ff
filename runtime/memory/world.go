package memory

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// World memory is shared by every agent and lives in the data dir, where
// no workspace cap (sandbox.workspace_mb) reaches it: without bounds of
// its own, a model that calls update_world on new topics in a loop fills
// the disk (150 calls made 9 MB). WorldLimits bound it.
type WorldLimits struct {
	// FileBytes caps one topic's file; 0 means DefaultWorldFileBytes.
	// One update_world writes at most MaxContentBytes whatever it says.
	FileBytes int
	// TotalBytes caps every file of the world folder together; 0 means
	// DefaultWorldTotalBytes.
	TotalBytes int64
	// Topics caps how many topic files there are; 0 means
	// DefaultWorldTopics.
	Topics int
}

// Default bounds of world memory: a few dozen topics of a few KiB each
// is what it is for (people, systems, preferences).
const (
	DefaultWorldFileBytes        = 32 << 10
	DefaultWorldTotalBytes int64 = 1 << 20
	DefaultWorldTopics           = 128
	// MaxWorldTopics is the most Topics may be: recall and the index read
	// at most this many names of the folder.
	MaxWorldTopics = maxDirNames
)

// orDefaults returns l with its zero fields set to the defaults.
func (l WorldLimits) orDefaults() WorldLimits {
	if l.FileBytes <= 0 {
		l.FileBytes = DefaultWorldFileBytes
	}
	if l.TotalBytes <= 0 {
		l.TotalBytes = DefaultWorldTotalBytes
	}
	if l.Topics <= 0 {
		l.Topics = DefaultWorldTopics
	}
	return l
}

// worldUsage is what the world folder holds.
type worldUsage struct {
	bytes  int64 // every regular file, topics and leftovers alike
	topics int   // *.md files that are not hidden: what recall shows
}

// measureWorld adds up the world folder's regular files, without
// following links. A folder with more names than it reads counts as
// full: it holds more topics than any cap allows.
func measureWorld(root *os.Root) (worldUsage, error) {
	var u worldUsage
	f, err := root.OpenFile(".", os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return u, err
	}
	names, err := f.Readdirnames(maxDirNames + 1)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return u, err
	}
	if len(names) > maxDirNames {
		u.topics = len(names)
	}
	for _, n := range names {
		st, err := root.Lstat(n)
		if err != nil || !st.Mode().IsRegular() {
			continue // gone meanwhile, or not a file: it holds no text
		}
		u.bytes += st.Size()
		if len(names) <= maxDirNames && strings.HasSuffix(n, ".md") && !strings.HasPrefix(n, ".") {
			u.topics++
		}
	}
	return u, nil
}

// checkWorld refuses to write size bytes as the topic file name when
// that would pass a bound of l, given what the folder holds. A write
// that makes a topic smaller always passes: it is how a full world
// memory is trimmed.
func checkWorld(root *os.Root, name string, size int, l WorldLimits) error {
	if size > l.FileBytes {
		return fmt.Errorf("a world topic holds at most %d KiB: keep what matters most, or split it across topics", l.FileBytes>>10)
	}
	old := int64(-1) // the topic's file does not exist yet
	if st, err := root.Lstat(name); err == nil && st.Mode().IsRegular() {
		old = st.Size()
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if int64(size) <= old {
		return nil
	}
	u, err := measureWorld(root)
	if err != nil {
		return err
	}
	if old < 0 && u.topics >= l.Topics {
		return fmt.Errorf("world memory already has its %d topics: add this to an existing topic with update_world, or merge two topics into one", l.Topics)
	}
	if grown := u.bytes - max(old, 0) + int64(size); grown > l.TotalBytes {
		return fmt.Errorf("world memory is full (%d KiB of %d KiB in %d topics): trim or merge topics with update_world before adding more",
			u.bytes>>10, l.TotalBytes>>10, u.topics)
	}
	return nil
}

// worldName is the file name of p, a path WorldPath returned.
func worldName(p string) string { return filepath.Base(p) }

// removeTopic removes the topic file name (whose path is p), if it is
// there; a folder, FIFO or device in its place is refused and left alone.
func removeTopic(root *os.Root, name, p string) error {
	st, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !st.Mode().IsRegular() && st.Mode()&fs.ModeSymlink == 0:
		return pathErr(p, ErrNotRegular)
	}
	if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(root, ".")
}
