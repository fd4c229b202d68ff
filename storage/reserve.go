package storage

import (
	"errors"
	"os"
	"sync"
	"syscall"
)

// The reserve keeps the database writable when something else on its
// disk (an agent's workspace, a log) fills it: <path>.reserve holds
// Options.ReserveBytes of allocated space that nothing else may take. A
// commit that hits a full disk deletes it and commits again, once; the
// space it freed lets the messages already acknowledged be followed by
// the few more that say what happened. While it is gone, ReserveGone is
// true, so that whatever fills the disk (tools that write) can refuse;
// each later commit checks the free space and puts the reserve back once
// there is room for it twice over.
type reserve struct {
	path string
	size int64
	mu   sync.Mutex // held while the file is deleted or made
}

func (s *Store) reservePath() string { return s.path + ".reserve" }

// openReserve makes sure the reserve file is there, allocated. It is not an
// error to fail (a disk already full): the Store then starts without one,
// with ReserveGone true, and makes it when space is back.
func (s *Store) openReserve() {
	if s.opts.ReserveBytes <= 0 || s.opts.ReadOnly {
		return
	}
	s.res = &reserve{path: s.reservePath(), size: s.opts.ReserveBytes}
	if err := s.res.create(); err != nil {
		s.reserveGone.Store(true)
		s.log.Error("cannot set aside the database's disk reserve; tools that write are refused until there is room",
			"path", s.res.path, "bytes", s.res.size, "err", err)
	}
}

// create allocates the file: fallocate where the file system has it,
// zeros where it has not, so the blocks are really taken (a sparse file
// would free nothing when deleted).
func (r *reserve) create() error {
	if fi, err := os.Stat(r.path); err == nil && fi.Size() == r.size {
		return nil
	}
	f, err := os.OpenFile(r.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = syscall.Fallocate(int(f.Fd()), 0, 0, r.size)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		err = writeZeros(f, r.size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(r.path)
	}
	return err
}

func writeZeros(f *os.File, n int64) error {
	buf := make([]byte, 64<<10)
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := f.Write(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// release deletes the reserve so a commit that found the disk full can be
// tried again. It reports whether there was one to delete.
func (s *Store) release() bool {
	r := s.res
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.reserveGone.Load() {
		return false
	}
	s.reserveGone.Store(true)
	err := os.Remove(r.path)
	s.log.Error("disk full: released the database's disk reserve so messages can still be stored; tools that write are refused until space is freed",
		"path", r.path, "bytes", r.size, "err", err)
	return err == nil
}

// restore puts the reserve back after a commit once the disk has room for
// it twice over, so that it is not taken back at once by what filled the
// disk.
func (s *Store) restore() {
	r := s.res
	if r == nil || !s.reserveGone.Load() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var fs syscall.Statfs_t
	if syscall.Statfs(s.path, &fs) != nil || int64(fs.Bavail)*int64(fs.Bsize) < 2*r.size {
		return
	}
	if err := r.create(); err != nil {
		return
	}
	s.reserveGone.Store(false)
	s.log.Info("disk space is back: the database's disk reserve is set aside again", "path", r.path)
}

// ReserveGone reports whether the disk reserve is missing: released by a
// commit that found the disk full, or never made for want of space. While
// it is, whatever can fill the disk (tools that write into a workspace on
// it) should refuse, so that the database stays writable. It is false when
// no reserve was asked for.
func (s *Store) ReserveGone() bool {
	return s.reserveGone.Load()
}
