package storage

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// The index space holds search indexes (the memory bank's) as opaque keys
// and values under index/<scope>/<kind>/. A scope is one index ("mem/<agent>");
// a kind is one table of it (postings, documents, vectors). Storage knows
// nothing of what they mean; DropIndex removes a scope whole.

// MaxIndexValue is the largest value IndexPut accepts, in bytes.
const MaxIndexValue = 1 << 20

// indexKind returns index/<scope>/<kind>, creating the buckets when create
// is set; without create, a missing bucket comes back nil, nil.
func (tx *Tx) indexKind(scope, kind string, create bool) (*bolt.Bucket, error) {
	if err := checkKey(scope); err != nil {
		return nil, fmt.Errorf("index scope: %w", err)
	}
	if err := checkKey(kind); err != nil {
		return nil, fmt.Errorf("index kind: %w", err)
	}
	top, err := tx.top(bucketIndex)
	if err != nil {
		return nil, err
	}
	if !create {
		sb := top.Bucket([]byte(scope))
		if sb == nil {
			return nil, nil
		}
		return sb.Bucket([]byte(kind)), nil
	}
	sb, err := top.CreateBucketIfNotExists([]byte(scope))
	if err != nil {
		return nil, fmt.Errorf("index %q: %w", scope, err)
	}
	kb, err := sb.CreateBucketIfNotExists([]byte(kind))
	if err != nil {
		return nil, fmt.Errorf("index %q/%q: %w", scope, kind, err)
	}
	return kb, nil
}

// IndexPut sets key to a copy of val in the scope's table kind, creating
// both on first use. Keys are 1 to MaxKeySize bytes (ErrInvalidKey
// otherwise), values at most MaxIndexValue bytes.
func (tx *Tx) IndexPut(scope, kind string, key, val []byte) error {
	return tx.indexPut(scope, kind, key, val, bolt.DefaultFillPercent)
}

// IndexAppend is IndexPut for a table whose keys come in ascending order
// (records keyed by time): its pages are filled whole instead of half, as
// a table written only at its end never fills the other half of a page
// it split. That halves its pages, and so what a commit reads back and
// copies to add to it. A key out of order is stored all the same.
func (tx *Tx) IndexAppend(scope, kind string, key, val []byte) error {
	return tx.indexPut(scope, kind, key, val, appendFill)
}

// indexPut puts key with the table's pages split at fill (set on every
// put: bbolt keeps one handle per table for the transaction).
func (tx *Tx) indexPut(scope, kind string, key, val []byte, fill float64) error {
	if len(key) == 0 || len(key) > MaxKeySize {
		return fmt.Errorf("index key of %d bytes: %w", len(key), ErrInvalidKey)
	}
	if len(val) > MaxIndexValue {
		return fmt.Errorf("index value of %d bytes is over %d: store less", len(val), MaxIndexValue)
	}
	b, err := tx.indexKind(scope, kind, true)
	if err != nil {
		return err
	}
	if val == nil {
		val = []byte{}
	}
	b.FillPercent = fill
	if err := b.Put(clone(key), clone(val)); err != nil {
		return fmt.Errorf("put index %q/%q: %w", scope, kind, err)
	}
	return nil
}

// IndexGet returns a copy of the value at key, or nil when it (or its
// table) is absent. A present empty value comes back non-nil and empty.
func (tx *Tx) IndexGet(scope, kind string, key []byte) ([]byte, error) {
	b, err := tx.indexKind(scope, kind, false)
	if err != nil || b == nil || len(key) == 0 {
		return nil, err
	}
	return clone(b.Get(key)), nil
}

// IndexDelete removes key; removing an absent key is not an error.
func (tx *Tx) IndexDelete(scope, kind string, key []byte) error {
	b, err := tx.indexKind(scope, kind, false)
	if err != nil || b == nil || len(key) == 0 {
		return err
	}
	return b.Delete(key)
}

// IndexScan calls fn for each key starting with prefix (every key when
// prefix is empty), in key order, and stops at the first error, which it
// returns. k and v are valid only during fn; fn must not write to the
// same table.
func (tx *Tx) IndexScan(scope, kind string, prefix []byte, fn func(k, v []byte) error) error {
	b, err := tx.indexKind(scope, kind, false)
	if err != nil || b == nil {
		return err
	}
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if v == nil {
			continue // a bucket: nothing of ours
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// DropIndex removes the scope and everything in it; dropping an absent
// scope is not an error. The pages freed are reused; the file does not
// shrink.
func (tx *Tx) DropIndex(scope string) error {
	if err := checkKey(scope); err != nil {
		return fmt.Errorf("index scope: %w", err)
	}
	top, err := tx.top(bucketIndex)
	if err != nil {
		return err
	}
	if err := top.DeleteBucket([]byte(scope)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
		return fmt.Errorf("drop index %q: %w", scope, err)
	}
	return nil
}

// IndexRange calls fn for each key k with from <= k < to, in key order (an
// empty to means no upper bound), and stops at the first error, which it
// returns. It seeks to from, so a time-ordered table is read from a point
// in time without walking what lies before it. k and v are valid only
// during fn; fn must not write to the same table.
func (tx *Tx) IndexRange(scope, kind string, from, to []byte, fn func(k, v []byte) error) error {
	b, err := tx.indexKind(scope, kind, false)
	if err != nil || b == nil {
		return err
	}
	c := b.Cursor()
	for k, v := c.Seek(from); k != nil && (len(to) == 0 || bytes.Compare(k, to) < 0); k, v = c.Next() {
		if v == nil {
			continue
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}
