package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Bucket and key names are the on-disk contract; see doc.go.
var (
	bucketMeta     = []byte("meta")
	bucketSessions = []byte("sessions")
	bucketActive   = []byte("active")
	bucketKV       = []byte("kv")
	bucketIndex    = []byte("index")

	keySchemaVersion = []byte("schema_version")

	// Inside sessions/<id>.
	keyMeta           = []byte("meta")
	keyLastSeq        = []byte("last_seq")
	bucketEvents      = []byte("events")
	bucketCheckpoints = []byte("checkpoints")
)

// A migration takes the file from version i to i+1, where i is its index
// in the table. It runs inside the one Update that also records the new
// version, so a crash mid-migration leaves the old version intact.
type migration func(btx *bolt.Tx) error

// migrations is the forward path; SchemaVersion is its length. Append,
// never edit: files in the field were written by earlier entries.
var migrations = [...]migration{
	migrateTo1,
	migrateTo2,
}

// SchemaVersion is the schema this build writes.
const SchemaVersion = uint64(len(migrations))

// migrateTo1 lays out an empty file.
func migrateTo1(btx *bolt.Tx) error {
	for _, name := range [][]byte{bucketMeta, bucketSessions, bucketActive, bucketKV} {
		if _, err := btx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// migrateTo2 adds the search indexes' space (index.go).
func migrateTo2(btx *bolt.Tx) error {
	if _, err := btx.CreateBucketIfNotExists(bucketIndex); err != nil {
		return fmt.Errorf("create bucket %s: %w", bucketIndex, err)
	}
	return nil
}

// openSchema reads the version in a View (no commit, no fsync when it is
// current) and only then migrates in one Update.
func (s *Store) openSchema(table []migration) error {
	known := uint64(len(table))
	var found uint64
	err := safely(s.path, func() error {
		return s.db.View(func(btx *bolt.Tx) (err error) {
			found, err = schemaVersion(btx)
			return err
		})
	})
	switch {
	case err != nil:
		return asCorrupt(s.path, err)
	case found == known:
		return nil
	case found > known, s.opts.ReadOnly:
		return &SchemaError{Path: s.path, Found: found, Known: known}
	}
	err = safely(s.path, func() error {
		return s.db.Update(func(btx *bolt.Tx) error { return migrate(btx, found, table) })
	})
	if err != nil {
		if isDiskFull(err) {
			return &DiskFullError{Path: s.path, Err: err}
		}
		return asCorrupt(s.path, fmt.Errorf("migrate schema %d to %d: %w", found, known, err))
	}
	return nil
}

// errNotOurs marks a bbolt file that another program wrote.
var errNotOurs = errors.New("bbolt file without agnx-lite's schema_version")

// schemaVersion returns 0 for a file with no buckets at all (new), and
// errNotOurs for a bbolt file that has buckets but not ours.
func schemaVersion(btx *bolt.Tx) (uint64, error) {
	mb := btx.Bucket(bucketMeta)
	if mb == nil {
		if k, _ := btx.Cursor().First(); k != nil {
			return 0, errNotOurs
		}
		return 0, nil
	}
	v := mb.Get(keySchemaVersion)
	if len(v) != 8 {
		return 0, fmt.Errorf("meta/schema_version is %d bytes, want 8", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

func migrate(btx *bolt.Tx, from uint64, table []migration) error {
	for v := from; v < uint64(len(table)); v++ {
		if err := table[v](btx); err != nil {
			return fmt.Errorf("to schema %d: %w", v+1, err)
		}
	}
	mb, err := btx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	return mb.Put(keySchemaVersion, binary.BigEndian.AppendUint64(nil, uint64(len(table))))
}

func asCorrupt(path string, err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return err
	}
	return &CorruptError{Path: path, Err: err}
}

// safely turns a panic inside bbolt (it panics on some damaged pages) into
// a *CorruptError.
func safely(path string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &CorruptError{Path: path, Err: fmt.Errorf("panic: %v", r)}
		}
	}()
	return fn()
}
