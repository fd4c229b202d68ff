package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Tx is a transaction handed to the closure of Update or View. It is valid
// only inside that closure; afterwards every method returns ErrTxClosed.
// Byte slices passed in are copied, so the caller may reuse its buffers at
// once. Slices handed to callbacks point into the file's memory map and are
// valid only during the callback; methods that return a slice return a
// copy.
type Tx struct {
	btx  *bolt.Tx
	kept int      // Options.CheckpointsKept
	app  appender // last session appended to; reset by DeleteSession
}

func checkKey(k string) error {
	if len(k) == 0 || len(k) > MaxKeySize {
		return fmt.Errorf("key of %d bytes: %w", len(k), ErrInvalidKey)
	}
	return nil
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	out := make([]byte, len(b)) // non-nil even when empty: present, not absent
	copy(out, b)
	return out
}

// top returns a top-level bucket, created by migrateTo1.
func (tx *Tx) top(name []byte) (*bolt.Bucket, error) {
	if tx.btx == nil {
		return nil, ErrTxClosed
	}
	b := tx.btx.Bucket(name)
	if b == nil {
		return nil, fmt.Errorf("bucket %s missing: %w", name, ErrCorrupt)
	}
	return b, nil
}

// session returns sessions/<id>, or ErrSessionNotFound.
func (tx *Tx) session(id string) (*bolt.Bucket, error) {
	if err := checkKey(id); err != nil {
		return nil, err
	}
	sessions, err := tx.top(bucketSessions)
	if err != nil {
		return nil, err
	}
	sb := sessions.Bucket([]byte(id))
	if sb == nil {
		return nil, fmt.Errorf("session %q: %w", id, ErrSessionNotFound)
	}
	return sb, nil
}

// CreateSession creates the session with its first meta. It returns
// ErrSessionExists if the id is taken.
func (tx *Tx) CreateSession(id string, meta []byte) error {
	if err := checkKey(id); err != nil {
		return err
	}
	sessions, err := tx.top(bucketSessions)
	if err != nil {
		return err
	}
	sb, err := sessions.CreateBucket([]byte(id))
	if errors.Is(err, berrors.ErrBucketExists) {
		return fmt.Errorf("create session %q: %w", id, ErrSessionExists)
	} else if err != nil {
		return fmt.Errorf("create session %q: %w", id, err)
	}
	for _, name := range [][]byte{bucketEvents, bucketCheckpoints} {
		if _, err := sb.CreateBucket(name); err != nil {
			return fmt.Errorf("create session %q: %w", id, err)
		}
	}
	if err := sb.Put(keyMeta, clone(meta)); err != nil {
		return fmt.Errorf("create session %q: %w", id, err)
	}
	return nil
}

// PutMeta replaces the session's meta. It returns ErrSessionNotFound if
// the session does not exist.
func (tx *Tx) PutMeta(id string, meta []byte) error {
	sb, err := tx.session(id)
	if err != nil {
		return err
	}
	if err := sb.Put(keyMeta, clone(meta)); err != nil {
		return fmt.Errorf("put meta of session %q: %w", id, err)
	}
	return nil
}

// Meta returns a copy of the session's meta, safe to keep after the
// transaction. It returns ErrSessionNotFound if the session does not exist.
func (tx *Tx) Meta(id string) ([]byte, error) {
	sb, err := tx.session(id)
	if err != nil {
		return nil, err
	}
	return clone(sb.Get(keyMeta)), nil
}

// SetActive marks the session as having a turn in flight, or clears the
// mark. Marking returns ErrSessionNotFound for an unknown session;
// clearing an absent mark is not an error.
func (tx *Tx) SetActive(id string, active bool) error {
	if err := checkKey(id); err != nil {
		return err
	}
	ab, err := tx.top(bucketActive)
	if err != nil {
		return err
	}
	if !active {
		return ab.Delete([]byte(id))
	}
	if _, err := tx.session(id); err != nil {
		return err
	}
	return ab.Put([]byte(id), []byte{})
}

// ActiveSessions calls fn for each session marked active, in id order,
// and stops at the first error, which it returns.
func (tx *Tx) ActiveSessions(fn func(id string) error) error {
	ab, err := tx.top(bucketActive)
	if err != nil {
		return err
	}
	c := ab.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if err := fn(string(k)); err != nil {
			return err
		}
	}
	return nil
}

// Sessions calls fn for every session, in id order, with its meta (valid
// only during fn), and stops at the first error, which it returns. It
// reads no event.
func (tx *Tx) Sessions(fn func(id string, meta []byte) error) error {
	sessions, err := tx.top(bucketSessions)
	if err != nil {
		return err
	}
	c := sessions.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			continue // not a bucket: nothing of ours
		}
		if err := fn(string(k), sessions.Bucket(k).Get(keyMeta)); err != nil {
			return err
		}
	}
	return nil
}

// SessionIDs calls fn with the id of every session, in id order. It reads
// only the sessions folder's own pages (the ids), not a page of each
// session as Sessions does: cheap to call often.
func (tx *Tx) SessionIDs(fn func(id string) error) error {
	sessions, err := tx.top(bucketSessions)
	if err != nil {
		return err
	}
	c := sessions.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			continue
		}
		if err := fn(string(k)); err != nil {
			return err
		}
	}
	return nil
}

// DeleteSession removes the session's events, checkpoints, meta and
// active mark. It returns ErrSessionNotFound if the session does not exist.
// The pages freed are reused; the file does not shrink.
func (tx *Tx) DeleteSession(id string) error {
	if err := checkKey(id); err != nil {
		return err
	}
	sessions, err := tx.top(bucketSessions)
	if err != nil {
		return err
	}
	tx.app = appender{}
	if err := sessions.DeleteBucket([]byte(id)); errors.Is(err, berrors.ErrBucketNotFound) {
		return fmt.Errorf("delete session %q: %w", id, ErrSessionNotFound)
	} else if err != nil {
		return fmt.Errorf("delete session %q: %w", id, err)
	}
	return tx.SetActive(id, false)
}

// PutKV sets key to a copy of val.
func (tx *Tx) PutKV(key string, val []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	kv, err := tx.top(bucketKV)
	if err != nil {
		return err
	}
	if val == nil {
		val = []byte{}
	}
	if err := kv.Put([]byte(key), clone(val)); err != nil {
		return fmt.Errorf("put kv %q: %w", key, err)
	}
	return nil
}

// KV returns a copy of the value at key, or nil, nil when it is absent. A
// present empty value comes back as a non-nil empty slice.
func (tx *Tx) KV(key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	kv, err := tx.top(bucketKV)
	if err != nil {
		return nil, err
	}
	return clone(kv.Get([]byte(key))), nil
}

// DeleteKV removes key; removing an absent key is not an error.
func (tx *Tx) DeleteKV(key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	kv, err := tx.top(bucketKV)
	if err != nil {
		return err
	}
	return kv.Delete([]byte(key))
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), seq) }

func lastSeq(sb *bolt.Bucket) uint64 {
	if v := sb.Get(keyLastSeq); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}
