package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/storage"
)

// Retention: after a checkpoint, the events before the window it starts
// from and up to its seq are no longer needed to rebuild the session. A
// session's compaction mode says what becomes of them: discard prunes
// them from the database, archive moves them to the session's archive file
// (archive.go) first, disabled keeps them. Retain does one bounded pass of
// one session; it runs off the loop (bbolt serialises it with the loop's
// commits, and the loop never reads events below the window).

// The compaction modes of sessions.compaction and spec.session.compaction.
const (
	CompactionDiscard  = "discard"
	CompactionArchive  = "archive"
	CompactionDisabled = "disabled"
)

// PruneFloor returns the highest seq of the session that may be removed:
// min(latest checkpoint seq, window_seq-1), where window_seq is the
// checkpoint's JSON key saying where the history window starts. A
// checkpoint without it (the history inline, from before windows), or no
// checkpoint at all, gives 0: nothing may be removed.
func PruneFloor(st *storage.Store, sessionID string) (uint64, error) {
	var floor uint64
	err := st.View(func(tx *storage.Tx) error {
		var err error
		floor, err = pruneFloor(tx, sessionID)
		return err
	})
	if errors.Is(err, storage.ErrSessionNotFound) {
		return 0, ErrSessionNotFound
	}
	return floor, err
}

func pruneFloor(tx *storage.Tx, id string) (uint64, error) {
	seq, cp, err := tx.LatestCheckpoint(id)
	if err != nil || cp == nil {
		return 0, err
	}
	var p fastjson.Parser
	v, err := p.ParseBytes(cp)
	if err != nil {
		return 0, nil // unreadable: the whole log may be needed
	}
	ws := v.GetUint64("window_seq")
	if ws == 0 {
		return 0, nil
	}
	return min(seq, ws-1), nil
}

// RetainOptions say what one Retain pass may do.
type RetainOptions struct {
	// Mode is discard, archive or disabled ("" is disabled).
	Mode string
	// MaxEvents and MaxBytes bound the events one pass removes (defaults
	// 5,000 and 4 MiB); the rest wait for the next pass.
	MaxEvents int
	MaxBytes  int
	// Limit, when set, lowers the floor to what other readers of the log
	// (a memory index) have read: the highest seq they no longer need.
	Limit func(tx *storage.Tx) (uint64, error)
}

// Retained is what a Retain pass did.
type Retained struct {
	Pruned   int // events removed from the database
	Archived int // of those, appended to the archive first
	// More is true when the pass stopped at its bounds with events left
	// that could be removed.
	More bool
}

// Retain removes, as o.Mode says, the events of the session up to its
// PruneFloor (bounded by o.MaxEvents and o.MaxBytes). In archive mode the
// events are appended to the archive file and fsynced before the
// transaction that prunes them: a crash in between loses nothing, and the
// next pass redoes the range.
func Retain(st *storage.Store, sessionID string, o RetainOptions) (Retained, error) {
	if o.Mode != CompactionDiscard && o.Mode != CompactionArchive {
		return Retained{}, nil
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 5000
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 4 << 20
	}
	span, err := retainSpan(st, sessionID, o)
	if err != nil || span.upto == 0 {
		return Retained{}, err
	}
	out := Retained{More: span.more}
	var length int64
	if o.Mode == CompactionArchive {
		if length, err = appendArchive(ArchiveDir(st), sessionID, span.good, span.first, span.upto, span.lines); err != nil {
			return Retained{}, err
		}
		out.Archived = len(span.lines)
	}
	err = st.Update(func(tx *storage.Tx) error {
		n, err := tx.PruneEvents(sessionID, span.upto)
		if err != nil {
			return err
		}
		out.Pruned = n
		if o.Mode != CompactionArchive {
			return nil
		}
		return tx.PutKV(archiveKey(sessionID), binary.AppendUvarint(nil, uint64(length)))
	})
	if errors.Is(err, storage.ErrSessionNotFound) {
		// Deleted meanwhile: its archive, made again just now, goes too.
		_ = removeArchive(ArchiveDir(st), sessionID)
		return Retained{}, nil
	}
	if err != nil {
		return Retained{}, fmt.Errorf("prune the events of session %s: %w", sessionID, err)
	}
	return out, nil
}

// span is the range one pass removes: events FirstSeq..upto, their lines
// (archive mode), and the archive's committed length.
type span struct {
	first uint64
	upto  uint64
	lines [][]byte
	good  int64
	more  bool
}

func retainSpan(st *storage.Store, id string, o RetainOptions) (span, error) {
	var sp span
	err := st.View(func(tx *storage.Tx) error {
		floor, err := pruneFloor(tx, id)
		if err != nil || floor == 0 {
			return err
		}
		if o.Limit != nil {
			lim, err := o.Limit(tx)
			if err != nil {
				return err
			}
			floor = min(floor, lim)
		}
		first, err := tx.FirstSeq(id)
		if err != nil || first == 0 || floor < first {
			return err
		}
		if o.Mode == CompactionArchive && archiveName(id) == "" {
			return nil // no file can hold it: keep the events
		}
		kv, err := tx.KV(archiveKey(id))
		if err != nil {
			return err
		}
		sp.good = committedLength(kv)
		sp.first = first
		size, count := 0, 0
		err = tx.Events(id, first-1, func(seq uint64, data []byte) error {
			if seq > floor {
				return errStopSpan
			}
			if count >= o.MaxEvents || count > 0 && size+len(data) > o.MaxBytes {
				sp.more = true
				return errStopSpan
			}
			if o.Mode == CompactionArchive {
				sp.lines = append(sp.lines, append([]byte(nil), data...))
			}
			size += len(data)
			count++
			sp.upto = seq
			return nil
		})
		if errors.Is(err, errStopSpan) {
			err = nil
		}
		return err
	})
	if errors.Is(err, storage.ErrSessionNotFound) {
		return span{}, nil
	}
	return sp, err
}

var errStopSpan = errors.New("stop")

// ArchiveSize returns the total size in bytes of the archive files of the
// sessions in st, and how many there are.
func ArchiveSize(st *storage.Store) (bytes int64, files int, err error) {
	matches, err := filepath.Glob(filepath.Join(ArchiveDir(st), "*.jsonl.gz"))
	if err != nil {
		return 0, 0, err
	}
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() {
			bytes += fi.Size()
			files++
		}
	}
	return bytes, files, nil
}
