package tasks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// boardFile is a board's file as readBoardFile found it, outside the
// store's lock; syncLocked applies it under the lock.
type boardFile struct {
	st      fs.FileInfo // nil: there is no file
	text    []byte
	read    bool   // text is the file's: false when it was unchanged since last seen
	problem string // why the file is refused, for a FileError
	err     error  // the file could not be looked at
}

// notRegular is the problem of a board file that is a link, a named pipe,
// a device, a socket or a folder.
const notRegular = "the file is not a plain file (a link, named pipe, device or folder): replace it with a regular file"

// readBoardFile reads the board's file without ever blocking on it and
// without the store's lock: lstat first (a link, FIFO or device is
// refused, never opened), then a non-blocking open that follows no link,
// a check of what was opened (a file swapped in between is caught), and a
// read of at most maxFile bytes. A file whose time and size match what
// was last seen is not read.
func (s *Store) readBoardFile(name string) boardFile {
	if s.o.Dir == "" || CheckBoard(name) != nil {
		return boardFile{}
	}
	path := s.path(name)
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return boardFile{}
	case err != nil:
		return boardFile{err: err}
	case !st.Mode().IsRegular():
		return boardFile{st: st, problem: notRegular}
	}
	if m := s.memo(name); m != nil && m.mod.Equal(st.ModTime()) && m.size == st.Size() {
		return boardFile{st: st}
	}
	if st.Size() > maxFile {
		return boardFile{st: st, problem: tooLarge}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_NOCTTY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return boardFile{}
	case errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.ENODEV):
		return boardFile{st: st, problem: notRegular}
	case err != nil:
		return boardFile{err: err}
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return boardFile{err: err}
	}
	if !st.Mode().IsRegular() {
		return boardFile{st: st, problem: notRegular}
	}
	text, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	switch {
	case err != nil:
		return boardFile{err: err}
	case len(text) > maxFile: // it grew since the stat
		return boardFile{st: st, problem: tooLarge}
	}
	return boardFile{st: st, text: text, read: true}
}

var tooLarge = fmt.Sprintf("the file is over %d MiB: cut it down", maxFile>>20)

// memo is what was last seen of the board's file, or nil.
func (s *Store) memo(name string) *fileMemo {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	return s.files[name]
}

func (s *Store) setMemo(name string, m *fileMemo) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.files[name] = m
}
