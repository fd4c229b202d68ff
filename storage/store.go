package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Options tune Open. A nil *Options means all defaults; a zero field means
// that field's default.
type Options struct {
	// LockTimeout: how long Open waits for the file lock held by another
	// process. Default 200ms.
	LockTimeout time.Duration

	// NoSync skips fsync on commit. For benchmarks and tests only: with it
	// a power cut may lose or damage acknowledged data.
	NoSync bool

	// ReadOnly opens with a shared lock (for inspection commands); it fails
	// with *LockedError while a writer holds the file, and never migrates.
	ReadOnly bool

	// CheckpointsKept: how many checkpoints per session to keep; older
	// ones are deleted when a new one is put. Default 2.
	CheckpointsKept int

	// ReserveBytes, when positive, is disk space set aside in
	// <path>.reserve for the database: a commit that finds the disk full
	// releases it and commits again (see ReserveGone). Default 0: none.
	ReserveBytes int64

	// Logger is told when the reserve is released or made again. Default:
	// discard.
	Logger *slog.Logger
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.LockTimeout <= 0 {
		out.LockTimeout = 200 * time.Millisecond
	}
	if out.CheckpointsKept <= 0 {
		out.CheckpointsKept = 2
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	return out
}

// Store is an open agnx-lite database file. Update and View may be called
// from several goroutines, though the runtime calls Update from one.
type Store struct {
	db      *bolt.DB
	path    string
	opts    Options
	log     *slog.Logger
	pidPath string // set while this Store owns <path>.pid
	closed  bool

	res         *reserve // nil without Options.ReserveBytes
	reserveGone atomic.Bool
}

// Open opens the database at path, creating it and its directory (0700) if
// needed, and migrates its schema forward. Every failure a user can cause
// comes back as one sentence: *LockedError, *NotWritableError,
// *DiskFullError, *CorruptError or *SchemaError.
func Open(path string, opts *Options) (*Store, error) {
	return open(path, opts, migrations[:])
}

func open(path string, opts *Options, table []migration) (*Store, error) {
	o := opts.withDefaults()
	path = filepath.Clean(path)
	if !o.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, openError(path, err, false)
		}
	}
	if err := verify(path, o); err != nil {
		return nil, err
	}
	db, err := openBolt(path, &bolt.Options{
		Timeout:         o.LockTimeout,
		NoSync:          o.NoSync,
		ReadOnly:        o.ReadOnly,
		NoFreelistSync:  true, // rebuilt by a scan on open; saves a write per commit
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: 0, // mapped pages cost RSS only when touched
	})
	if err != nil {
		return nil, openError(path, err, o.ReadOnly)
	}
	db.AllocSize = growStep
	s := &Store{db: db, path: path, opts: o, log: o.Logger}
	if err := s.openSchema(table); err != nil {
		_ = db.Close()
		return nil, err
	}
	if !o.ReadOnly {
		s.writePID()
		s.openReserve()
	}
	return s, nil
}

// growStep is how much the file grows by past what it holds. bbolt's
// default, 16 MiB, made a 17 MiB database a 33 MiB file: room a backup
// copies and a person reading ls takes for history.
const growStep = 1 << 20

// openBolt turns a panic while reading a damaged file into an error.
func openBolt(path string, o *bolt.Options) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("%w: panic: %v", berrors.ErrInvalid, r)
		}
	}()
	return bolt.Open(path, 0o600, o)
}

// openError turns what bbolt and the OS said into the sentence a user
// needs.
func openError(path string, err error, readOnly bool) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return &LockedError{Path: path, PID: readPID(path + ".pid")}
	case isDiskFull(err):
		return &DiskFullError{Path: path, Err: err}
	case !readOnly && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)):
		return NewNotWritableError(filepath.Dir(path), err)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum),
		errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrInvalidMapping):
		return &CorruptError{Path: path, Err: err}
	case readOnly && errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no database at %s: start agnx-lite once to create it or pass the right --data-dir: %w", path, err)
	}
	return fmt.Errorf("open database %s: %w", path, err)
}

func isDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// writePID records our pid so that a second Open can name the holder. It
// is advisory: a failure only makes that message vaguer.
func (s *Store) writePID() {
	p := s.path + ".pid"
	if os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600) == nil {
		s.pidPath = p
	}
}

// readPID returns the pid in the file if that process is alive, else 0.
func readPID(p string) int {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		return 0
	}
	if err := proc.Signal(syscall.Signal(0)); err != nil && !errors.Is(err, fs.ErrPermission) {
		return 0
	}
	return pid
}

// Close releases the file. It waits for open transactions; calling it
// twice is harmless.
func (s *Store) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.pidPath != "" {
		// Before the lock goes: after it, the file may be the next owner's.
		_ = os.Remove(s.pidPath)
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close %s: %w", s.path, err)
	}
	return nil
}

// Path returns the cleaned path the Store was opened with.
func (s *Store) Path() string { return s.path }

// Update runs fn in a read-write transaction and commits (one fsync unless
// NoSync) if fn returns nil; any error from fn rolls back and is returned
// unchanged. A commit that hits a full disk releases the disk reserve
// (Options.ReserveBytes), if there is one, and runs fn again in a new
// transaction, once; if the disk is still full it returns *DiskFullError
// and leaves the file as it was before the call. So fn must do nothing
// but its work on the Tx: it may run twice.
//
// Update holds bbolt's writer lock for the duration of fn, so group
// commit is the caller's job: collect the batch first, then call Update
// once.
func (s *Store) Update(fn func(*Tx) error) error {
	full, err := s.update(fn)
	if full && s.release() {
		full, err = s.update(fn)
	}
	if err == nil {
		s.restore()
		return nil
	}
	if full {
		return s.commitError(err)
	}
	return err
}

// update is one attempt: fn's own error unchanged, a commit's error
// wrapped, damage as *CorruptError; full is true when the commit found the
// disk full.
func (s *Store) update(fn func(*Tx) error) (full bool, err error) {
	var fnErr error
	err = s.guard(func() error {
		return s.db.Update(func(btx *bolt.Tx) error {
			tx := &Tx{btx: btx, kept: s.opts.CheckpointsKept}
			fnErr = fn(tx)
			*tx = Tx{} // later use gets ErrTxClosed
			return fnErr
		})
	})
	if err == nil || fnErr != nil || errors.Is(err, ErrCorrupt) {
		return false, err
	}
	if isDiskFull(err) {
		return true, err
	}
	return false, s.commitError(err)
}

func (s *Store) commitError(err error) error {
	if isDiskFull(err) {
		return &DiskFullError{Path: s.path, Err: err}
	}
	return fmt.Errorf("update %s: %w", s.path, err)
}

// View runs fn in a read-only transaction. Several may run at once, and
// alongside one Update.
func (s *Store) View(fn func(*Tx) error) error {
	return s.guard(func() error {
		return s.db.View(func(btx *bolt.Tx) error {
			tx := &Tx{btx: btx, kept: s.opts.CheckpointsKept}
			err := fn(tx)
			*tx = Tx{} // later use gets ErrTxClosed
			return err
		})
	})
}

// Check runs bbolt's consistency check over the whole file in a read
// transaction and returns the first problem as a *CorruptError, or nil.
// It reads every page: on a big file it takes time and touches memory.
func (s *Store) Check() error {
	return s.guard(func() error { return s.check() })
}

func (s *Store) check() error {
	return s.db.View(func(btx *bolt.Tx) error {
		var first error
		for err := range btx.Check() { // drain: the checker goroutine reads the tx
			if first == nil {
				first = err
			}
		}
		if first != nil {
			return &CorruptError{Path: s.path, Err: first}
		}
		return nil
	})
}

// Stats are cheap figures for doctor and /metrics.
type Stats struct {
	FileSize       int64 // bytes on disk
	Sessions       int
	ActiveSessions int
	FreePages      int // pages on the freelist, reused before the file grows
}

// Stats counts sessions with a key scan (no event is read).
func (s *Store) Stats() (Stats, error) {
	var st Stats
	fi, err := os.Stat(s.path)
	if err != nil {
		return st, fmt.Errorf("stats: %w", err)
	}
	st.FileSize = fi.Size()
	st.FreePages = s.db.Stats().FreePageN
	err = s.guard(func() error {
		return s.db.View(func(btx *bolt.Tx) error {
			st.Sessions = countKeys(btx.Bucket(bucketSessions))
			st.ActiveSessions = countKeys(btx.Bucket(bucketActive))
			return nil
		})
	})
	return st, err
}

func countKeys(b *bolt.Bucket) int {
	if b == nil {
		return 0
	}
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}
