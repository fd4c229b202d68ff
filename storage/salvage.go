package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// SalvageReport says what Salvage copied.
type SalvageReport struct {
	Sessions int // copied whole
	Partial  int // copied up to the first unreadable event
	Lost     int // ids found whose meta or events could not be read at all
	Events   int
	KV       int
	// Index counts the entries of the index space copied (search
	// indexes, schedules, the usage ledger).
	Index int
	// Unlisted is true when the list of sessions itself was damaged:
	// sessions past the damage were not found.
	Unlisted bool
}

// salvageChunk bounds the events held in memory between a read of the
// damaged file and a write of the new one.
const salvageChunk = 512

// Salvage copies what can still be read of the damaged database at src
// into a new database at dst (which must not exist): every session's meta,
// its events up to the first one that cannot be read, its last checkpoint
// if it covers only copied events, the active marks, the KV space and the
// index space (search indexes, schedules, the usage ledger). It
// reads src with bbolt read-only (no freelist rebuild), each read in its
// own guarded transaction, so a damaged page loses what lies behind it,
// not the whole copy. Run it with the daemon stopped.
func Salvage(src, dst string) (SalvageReport, error) {
	var rep SalvageReport
	if _, err := os.Stat(dst); err == nil {
		return rep, fmt.Errorf("%s already exists: move it away first", dst)
	}
	in, err := openBolt(src, &bolt.Options{ReadOnly: true, Timeout: 200 * time.Millisecond})
	if err != nil {
		oerr := openError(src, err, true)
		var locked *LockedError
		if errors.As(oerr, &locked) { // held, not lost: stop the holder first
			return rep, oerr
		}
		return rep, fmt.Errorf("nothing can be recovered from %s (%v): restore a backup", src, oerr)
	}
	defer in.Close()
	out, err := Open(dst, nil)
	if err != nil {
		return rep, err
	}
	sv := salvager{in: in, out: out, src: src}
	err = sv.copy(&rep)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(dst)
	}
	return rep, err
}

type salvager struct {
	in  *bolt.DB
	out *Store
	src string
}

// read runs fn in a read transaction of the damaged file and reports a
// panic or a fault there as an error.
func (sv *salvager) read(fn func(*bolt.Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable: %v", r)
		}
	}()
	return sv.in.View(fn)
}

func (sv *salvager) copy(rep *SalvageReport) error {
	var ids []string
	err := sv.read(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSessions)
		if b == nil {
			return errors.New("no sessions bucket")
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil {
				ids = append(ids, string(k))
			}
		}
		return nil
	})
	rep.Unlisted = err != nil
	for _, id := range ids {
		n, whole, err := sv.session(id)
		switch {
		case err != nil:
			return err
		case n < 0:
			rep.Lost++
		case whole:
			rep.Sessions++
		default:
			rep.Partial++
		}
		rep.Events += max(n, 0)
	}
	if err := sv.kv(rep); err != nil {
		return err
	}
	return sv.index(rep)
}

// index copies the index space table by table, as far as each reads, in
// chunks of salvageChunk entries (a search index may be large).
func (sv *salvager) index(rep *SalvageReport) error {
	type table struct{ scope, kind string }
	var tables []table
	_ = sv.read(func(tx *bolt.Tx) error {
		top := tx.Bucket(bucketIndex)
		if top == nil {
			return nil
		}
		return top.ForEach(func(scope, v []byte) error {
			sb := top.Bucket(scope)
			if v != nil || sb == nil {
				return nil
			}
			return sb.ForEach(func(kind, v []byte) error {
				if v == nil && sb.Bucket(kind) != nil {
					tables = append(tables, table{string(scope), string(kind)})
				}
				return nil
			})
		})
	})
	for _, t := range tables {
		var after []byte
		for {
			var keys, vals [][]byte
			rerr := sv.read(func(tx *bolt.Tx) error {
				kb := tx.Bucket(bucketIndex).Bucket([]byte(t.scope)).Bucket([]byte(t.kind))
				c := kb.Cursor()
				k, v := c.First()
				if after != nil {
					if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
						k, v = c.Next()
					}
				}
				for ; k != nil && len(keys) < salvageChunk; k, v = c.Next() {
					if v != nil && len(v) <= MaxIndexValue {
						keys, vals = append(keys, clone(k)), append(vals, clone(v))
					}
				}
				return nil
			})
			err := sv.out.Update(func(tx *Tx) error {
				for i, k := range keys {
					if err := tx.IndexPut(t.scope, t.kind, k, vals[i]); err != nil && !errors.Is(err, ErrInvalidKey) {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			rep.Index += len(keys)
			if rerr != nil || len(keys) < salvageChunk {
				break // the table's end, or damage: what lies behind it is lost
			}
			after = keys[len(keys)-1]
		}
	}
	return nil
}

// session copies one session; n is -1 when nothing of it was readable.
// The error is the new file's, which ends the copy.
func (sv *salvager) session(id string) (n int, whole bool, err error) {
	var meta, last []byte
	var first uint64
	rerr := sv.read(func(tx *bolt.Tx) error {
		sb := tx.Bucket(bucketSessions).Bucket([]byte(id))
		meta, last = clone(sb.Get(keyMeta)), clone(sb.Get(keyLastSeq))
		return nil
	})
	if rerr != nil {
		return -1, false, nil
	}
	err = sv.out.Update(func(tx *Tx) error { return tx.CreateSession(id, meta) })
	if errors.Is(err, ErrInvalidKey) { // a damaged id, longer than a key may be: lost
		return -1, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	whole = sv.read(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketSessions).Bucket([]byte(id)).Bucket(bucketEvents).Cursor().First(); k != nil {
			first = seqOf(k)
		}
		return nil
	}) == nil
	next := first
	for next > 0 {
		var keys, vals [][]byte
		rerr = sv.read(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketSessions).Bucket([]byte(id)).Bucket(bucketEvents).Cursor()
			for k, v := c.Seek(seqKey(next)); k != nil && len(keys) < salvageChunk; k, v = c.Next() {
				if seqOf(k) != next {
					return fmt.Errorf("event %d missing", next)
				}
				keys, vals = append(keys, clone(k)), append(vals, clone(v))
				next++
			}
			return nil
		})
		if err := sv.out.Update(func(tx *Tx) error { return putEvents(tx, id, keys, vals) }); err != nil {
			return n, false, err
		}
		n += len(keys)
		if rerr != nil {
			whole = false
			break
		}
		if len(keys) < salvageChunk {
			break
		}
	}
	if whole && len(last) == 8 && first > 0 {
		whole = seqOf(last) == next-1
	}
	return n, whole, sv.checkpoint(id)
}

// putEvents writes events under their own seqs, which may start past 1
// (pruned), and moves last_seq with them.
func putEvents(tx *Tx, id string, keys, vals [][]byte) error {
	sb, err := tx.session(id)
	if err != nil || len(keys) == 0 {
		return err
	}
	eb := sb.Bucket(bucketEvents)
	for i, k := range keys {
		if err := eb.Put(k, vals[i]); err != nil {
			return err
		}
	}
	return sb.Put(keyLastSeq, keys[len(keys)-1])
}

// checkpoint copies the newest readable checkpoint that folds only events
// the new file holds.
func (sv *salvager) checkpoint(id string) error {
	var seq uint64
	var state []byte
	if sv.read(func(tx *bolt.Tx) error {
		k, v := tx.Bucket(bucketSessions).Bucket([]byte(id)).Bucket(bucketCheckpoints).Cursor().Last()
		if k != nil {
			seq, state = seqOf(k), clone(v)
		}
		return nil
	}) != nil || state == nil {
		return nil
	}
	err := sv.out.Update(func(tx *Tx) error { return tx.PutCheckpoint(id, seq, state) })
	if errors.Is(err, ErrCheckpointAhead) {
		return nil // events it folds were lost: recovery replays the log
	}
	return err
}

// kv copies the KV space and the active marks, as far as they read.
func (sv *salvager) kv(rep *SalvageReport) error {
	for _, name := range [][]byte{bucketKV, bucketActive} {
		var keys, vals [][]byte
		_ = sv.read(func(tx *bolt.Tx) error {
			b := tx.Bucket(name)
			if b == nil {
				return nil
			}
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				keys, vals = append(keys, clone(k)), append(vals, clone(v))
			}
			return nil
		})
		err := sv.out.Update(func(tx *Tx) error {
			for i, k := range keys {
				var err error
				if bytes.Equal(name, bucketKV) {
					err = tx.PutKV(string(k), vals[i])
				} else {
					err = tx.SetActive(string(k), true)
				}
				if err != nil && !errors.Is(err, ErrSessionNotFound) && !errors.Is(err, ErrInvalidKey) {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if bytes.Equal(name, bucketKV) {
			rep.KV = len(keys)
		}
	}
	return nil
}

func seqOf(k []byte) uint64 {
	if len(k) != 8 {
		return 0
	}
	return uint64(k[0])<<56 | uint64(k[1])<<48 | uint64(k[2])<<40 | uint64(k[3])<<32 |
		uint64(k[4])<<24 | uint64(k[5])<<16 | uint64(k[6])<<8 | uint64(k[7])
}

// SalvagePath is where `db recover` writes the copy: next to the
// database, on the same disk.
func SalvagePath(db string) string {
	return filepath.Join(filepath.Dir(db), filepath.Base(db)+".recovered")
}
