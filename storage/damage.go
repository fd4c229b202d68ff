package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

// verify checks the structure of an existing file before bbolt maps it
// (see verifyFile), holding the same kind of lock bbolt will take, so a
// writer in another process is never read mid-commit. A missing file is
// left to bbolt, which creates it (or, read-only, says there is none).
func verify(path string, o Options) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return openError(path, err, o.ReadOnly)
	}
	defer f.Close()
	if err := lockWait(f, !o.ReadOnly, o.LockTimeout); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return &LockedError{Path: path, PID: readPID(path + ".pid")}
		}
		return fmt.Errorf("lock %s: %w", path, err)
	}
	// Unlocked by Close; bbolt then takes its own lock on its own fd.
	if err := verifyFile(f); err != nil {
		return &CorruptError{Path: path, Err: err}
	}
	return nil
}

// lockWait takes flock(2) on f, polling until timeout like bbolt does.
func lockWait(f *os.File, exclusive bool, timeout time.Duration) error {
	how := syscall.LOCK_SH | syscall.LOCK_NB
	if exclusive {
		how = syscall.LOCK_EX | syscall.LOCK_NB
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err == nil || !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// guard runs fn, a bbolt call, and turns what bbolt does on a page it
// cannot trust into a *CorruptError: an assertion panic, an index out of
// range on a garbage element count, or a fault on a page the file no
// longer holds (SetPanicOnFault turns that fault into a panic instead of
// a crash). bbolt panics in the calling goroutine, so this recover sees
// it. A panic that did not start in bbolt is a bug in the caller's
// closure and goes on up.
func (s *Store) guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if !damagePanic(r) {
			panic(r)
		}
		err = &CorruptError{Path: s.path, Err: fmt.Errorf("bbolt: %v", r)}
	}()
	return fn()
}

// damagePanic reports whether the panic being recovered is bbolt's (or a
// memory fault, which on a mapped file means the file changed under us).
func damagePanic(r any) bool {
	if f, ok := r.(interface{ Addr() uintptr }); ok && f != nil {
		return true
	}
	var pcs [64]uintptr
	n := goruntime.Callers(3, pcs[:]) // above damagePanic and the deferred func
	frames := goruntime.CallersFrames(pcs[:n])
	for panicking := false; ; {
		fr, more := frames.Next()
		switch {
		case fr.Function == "runtime.gopanic" || fr.Function == "runtime.sigpanic":
			panicking = true
		case panicking && !strings.HasPrefix(fr.Function, "runtime."):
			return strings.HasPrefix(fr.Function, "go.etcd.io/bbolt")
		}
		if !more {
			return false
		}
	}
}
