package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
)

// Sentinels. Every error this package returns that a caller may branch on
// matches one of these with errors.Is; the typed errors below carry the
// fields and the sentence a user sees.
var (
	// ErrSessionNotFound is returned by Tx methods that need an existing
	// session (PutMeta, Meta, AppendEvent, PutCheckpoint, SetActive(true),
	// DeleteSession, ...) when no session has that id.
	ErrSessionNotFound = errors.New("session not found")

	// ErrSessionExists is returned by CreateSession when the id is taken.
	ErrSessionExists = errors.New("session already exists")

	// ErrSeqGap is returned by AppendEvent when seq is not LastSeq+1. The
	// concrete error is a *SeqGapError holding the expected seq.
	ErrSeqGap = errors.New("event seq is not the next one")

	// ErrCheckpointAhead is returned by PutCheckpoint when seq is greater
	// than the session's LastSeq: a checkpoint may only fold events that
	// are already in the log.
	ErrCheckpointAhead = errors.New("checkpoint seq is ahead of the last event")

	// ErrInvalidKey is returned when a session id or KV key is empty or
	// longer than MaxKeySize bytes.
	ErrInvalidKey = errors.New("key is empty or too long")

	// ErrTxClosed is returned when a *Tx is used after its closure returned.
	ErrTxClosed = errors.New("storage: transaction used after its closure returned")

	// ErrDiskFull is returned by Open and Update when the file system
	// reported ENOSPC or EDQUOT. The concrete error is a *DiskFullError.
	// The transaction that hit it was rolled back; earlier commits are
	// intact.
	ErrDiskFull = errors.New("disk full")

	// ErrSchemaTooNew is returned by Open when the file was written by a
	// newer agnx-lite. The concrete error is a *SchemaError.
	ErrSchemaTooNew = errors.New("database schema is newer than this build")

	// ErrCorrupt is returned by Open when the file is empty, cut short,
	// not a bbolt file, not an agnx-lite database, or a page bbolt would
	// follow is damaged; by Check when the consistency check fails; and by
	// Update and View when bbolt panicked on a damaged page. The concrete
	// error is a *CorruptError.
	ErrCorrupt = errors.New("database is damaged or not an agnx-lite database")

	// ErrNotWritable is returned by Open when the data directory or the
	// file cannot be created or written. The concrete error is a
	// *NotWritableError.
	ErrNotWritable = errors.New("data dir is not writable")

	// ErrLocked is returned by Open when another process (or another Store
	// in this process) holds the file lock. The concrete error is a
	// *LockedError.
	ErrLocked = errors.New("database is locked by another process")
)

// MaxKeySize is the longest session id or KV key accepted, in bytes.
const MaxKeySize = 32768

// LockedError is returned by Open when the file lock is held elsewhere for
// longer than Options.LockTimeout.
type LockedError struct {
	Path string
	PID  int // 0 when the holder is unknown
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return "agnx-lite is already running (pid " + strconv.Itoa(e.PID) + ") and holds " +
			e.Path + ": stop it or use another --data-dir"
	}
	return "another agnx-lite process holds " + e.Path + ": stop it or use another --data-dir"
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// DiskFullError is returned by Open and Update when a write hit ENOSPC.
type DiskFullError struct {
	Path string
	Err  error // the underlying file system error
}

func (e *DiskFullError) Error() string {
	return "disk full while writing " + e.Path + ": free some space; nothing acknowledged was lost"
}

func (e *DiskFullError) Unwrap() []error { return []error{ErrDiskFull, e.Err} }

// NotWritableError is returned by Open when the data directory (or the
// database file in it) cannot be created or written.
type NotWritableError struct {
	Dir string
	Err error
}

func (e *NotWritableError) Error() string {
	return "data dir " + e.Dir + " is not writable: fix its permissions or choose another with --data-dir"
}

func (e *NotWritableError) Unwrap() []error { return []error{ErrNotWritable, e.Err} }

// NewNotWritableError returns the error Open gives when dir cannot be
// written. Exported so callers that create the data dir themselves give the
// same sentence.
func NewNotWritableError(dir string, err error) *NotWritableError {
	return &NotWritableError{Dir: filepath.Clean(dir), Err: err}
}

// CorruptError is returned by Open when the file cannot be read as an
// agnx-lite database (empty, cut short, a damaged page, both meta pages
// damaged, or another program's bbolt file), by Check when bbolt's
// consistency check fails, and by Update and View when bbolt panicked on a
// page it could not trust. Restarting cannot fix it: the file must be
// restored or moved away.
type CorruptError struct {
	Path string
	Err  error // what was found, for the log
}

func (e *CorruptError) Error() string {
	if errors.Is(e.Err, errNotOurs) {
		return e.Path + " is not an agnx-lite database: move it aside or choose another --data-dir"
	}
	return "the database " + e.Path + " is damaged (" + e.Err.Error() + "): " + DamagedFix
}

// DamagedFix is what a user does about a damaged database; doctor and
// the CLI give it in the same words.
const DamagedFix = "move it aside and restore a backup, or run \"agnx-lite db recover\" to keep what is readable"

func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// SchemaError is returned by Open when the schema_version in the file is
// not one this build can use as is: newer (matches ErrSchemaTooNew), or
// older on a read-only open, where it cannot be migrated.
type SchemaError struct {
	Path  string
	Found uint64 // version in the file
	Known uint64 // version this build writes
}

func (e *SchemaError) Error() string {
	if e.Found > e.Known {
		return fmt.Sprintf("database %s was written by a newer agnx-lite (schema %d, this build knows %d): upgrade agnx-lite",
			e.Path, e.Found, e.Known)
	}
	return fmt.Sprintf("database %s has an older schema (%d, this build writes %d): open it once without read-only to migrate it",
		e.Path, e.Found, e.Known)
}

func (e *SchemaError) Unwrap() error {
	if e.Found > e.Known {
		return ErrSchemaTooNew
	}
	return nil
}

// SeqGapError is returned by AppendEvent when seq is not the next one.
type SeqGapError struct {
	Session string
	Got     uint64
	Want    uint64
}

func (e *SeqGapError) Error() string {
	return fmt.Sprintf("append event to session %q: seq %d given, %d expected", e.Session, e.Got, e.Want)
}

func (e *SeqGapError) Unwrap() error { return ErrSeqGap }
