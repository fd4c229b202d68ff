package memory

import (
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"
)

// Bounds on what the index reads of the memory folders, which anyone
// (a person, a tool, a script) may have filled.
const (
	maxFileRead = 1 << 20 // bytes read of one file; the rest is not indexed
	maxDirFiles = 10000   // entries looked at in one folder
)

// dailyName reports whether name is a daily file's: YYYY-MM-DD.md.
func dailyName(name string) bool {
	if len(name) != len("2006-01-02.md") || name[4] != '-' || name[7] != '-' || name[10:] != ".md" {
		return false
	}
	for i, c := range []byte(name[:10]) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// bankFile is one memory file found on disk.
type bankFile struct {
	source string   // memory/daily/2026-11-20.md, world/cats.md
	root   *os.Root // the folder it is read through
	name   string   // its path inside root
	size   int64
	mtime  time.Time
}

// roots opens the memory and world folders; a missing one is nil.
type roots struct{ mem, world *os.Root }

func openRoots(memDir, worldDir string) (roots, error) {
	var r roots
	var err error
	if r.mem, err = openRoot(memDir); err != nil {
		return r, err
	}
	if r.world, err = openRoot(worldDir); err != nil {
		r.close()
		return roots{}, err
	}
	return r, nil
}

func openRoot(dir string) (*os.Root, error) {
	if dir == "" {
		return nil, nil
	}
	r, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return r, err
}

func (r roots) close() {
	for _, x := range []*os.Root{r.mem, r.world} {
		if x != nil {
			x.Close()
		}
	}
}

// list stats the bank's files: MEMORY.md, daily/*.md, world *.md. Only
// regular files count; symlinks, pipes and devices are skipped.
func (r roots) list() []bankFile {
	var out []bankFile
	if r.mem != nil {
		if fi, err := r.mem.Lstat("MEMORY.md"); err == nil && fi.Mode().IsRegular() {
			out = append(out, bankFile{source: "memory/MEMORY.md", root: r.mem, name: "MEMORY.md", size: fi.Size(), mtime: fi.ModTime()})
		}
		out = appendDir(out, r.mem, "daily", "memory/daily/", dailyName)
	}
	if r.world != nil {
		out = appendDir(out, r.world, ".", "world/", func(n string) bool {
			return strings.HasSuffix(n, ".md") && !strings.HasPrefix(n, ".")
		})
	}
	return out
}

func appendDir(out []bankFile, root *os.Root, dir, prefix string, keep func(string) bool) []bankFile {
	f, err := root.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return out
	}
	defer f.Close()
	ents, _ := f.ReadDir(maxDirFiles)
	for _, e := range ents {
		if !e.Type().IsRegular() || !keep(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, bankFile{source: prefix + e.Name(), root: root, name: path.Join(dir, e.Name()),
			size: fi.Size(), mtime: fi.ModTime()})
	}
	return out
}

// read returns the file's first maxFileRead bytes (cut at a line end when
// the file is longer) and their hash. The open never blocks and only a
// regular file is read, so a FIFO swapped in is refused.
func (b bankFile) read() (string, string, error) {
	f, err := b.root.OpenFile(b.name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", "", err
	}
	if !st.Mode().IsRegular() {
		return "", "", errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileRead+1))
	if err != nil {
		return "", "", err
	}
	if len(data) > maxFileRead {
		data = data[:maxFileRead]
		if i := strings.LastIndexByte(string(data), '\n'); i > 0 {
			data = data[:i+1]
		}
	}
	sum := sha256.Sum256(data)
	return string(data), string(sum[:16]), nil
}

// chunks cuts the file's content into entries.
func (b bankFile) chunks(content string) []chunk {
	if day, ok := strings.CutPrefix(b.source, "memory/daily/"); ok {
		if d, err := time.ParseInLocation("2006-01-02", strings.TrimSuffix(day, ".md"), time.Local); err == nil {
			return chunkDaily(d, content)
		}
	}
	return chunkDoc(b.mtime, content)
}
