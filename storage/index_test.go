package storage

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTx_Index(t *testing.T) {
	s := MustOpen(t)
	require.NoError(t, s.Update(func(tx *Tx) error {
		for _, k := range []string{"apple\x00a", "apple\x00b", "apricot\x00a", "banana\x00c"} {
			require.NoError(t, tx.IndexPut("mem/a", "post", []byte(k), []byte(k[len(k)-1:])))
		}
		require.NoError(t, tx.IndexPut("mem/b", "post", []byte("apple\x00z"), nil))
		return tx.IndexPut("mem/a", "meta", []byte("n"), []byte{3})
	}))
	require.NoError(t, s.View(func(tx *Tx) error {
		var got []string
		require.NoError(t, tx.IndexScan("mem/a", "post", []byte("apple\x00"), func(k, v []byte) error {
			got = append(got, string(k)+"="+string(v))
			return nil
		}))
		assert.Equal(t, []string{"apple\x00a=a", "apple\x00b=b"}, got)

		n := 0
		require.NoError(t, tx.IndexScan("mem/a", "post", nil, func(k, v []byte) error { n++; return nil }))
		assert.Equal(t, 4, n)
		stop := errors.New("stop")
		assert.ErrorIs(t, tx.IndexScan("mem/a", "post", nil, func(k, v []byte) error { return stop }), stop)

		v, err := tx.IndexGet("mem/a", "meta", []byte("n"))
		require.NoError(t, err)
		assert.Equal(t, []byte{3}, v)
		v, err = tx.IndexGet("mem/b", "post", []byte("apple\x00z"))
		require.NoError(t, err)
		assert.NotNil(t, v, "present and empty")
		assert.Empty(t, v)
		for _, absent := range [][2]string{{"mem/a", "nope"}, {"mem/zz", "post"}} {
			v, err = tx.IndexGet(absent[0], absent[1], []byte("x"))
			require.NoError(t, err)
			assert.Nil(t, v)
			require.NoError(t, tx.IndexScan(absent[0], absent[1], nil, func(k, v []byte) error { return stop }))
		}
		return nil
	}))

	require.NoError(t, s.Update(func(tx *Tx) error {
		require.NoError(t, tx.IndexDelete("mem/a", "post", []byte("apple\x00a")))
		require.NoError(t, tx.IndexDelete("mem/a", "post", []byte("absent")))
		require.NoError(t, tx.IndexDelete("mem/zz", "post", []byte("absent")))
		require.NoError(t, tx.DropIndex("mem/b"))
		return tx.DropIndex("mem/never")
	}))
	require.NoError(t, s.View(func(tx *Tx) error {
		v, err := tx.IndexGet("mem/a", "post", []byte("apple\x00a"))
		assert.Nil(t, v)
		require.NoError(t, err)
		v, err = tx.IndexGet("mem/a", "post", []byte("apple\x00b"))
		assert.Equal(t, []byte("b"), v)
		require.NoError(t, err)
		v, err = tx.IndexGet("mem/b", "post", []byte("apple\x00z"))
		assert.Nil(t, v, "dropped")
		return err
	}))
}

func TestTx_IndexLimits(t *testing.T) {
	s := MustOpen(t)
	err := s.Update(func(tx *Tx) error {
		assert.ErrorIs(t, tx.IndexPut("mem/a", "post", nil, []byte("v")), ErrInvalidKey)
		assert.ErrorIs(t, tx.IndexPut("mem/a", "post", []byte(strings.Repeat("k", MaxKeySize+1)), nil), ErrInvalidKey)
		assert.ErrorIs(t, tx.IndexPut("", "post", []byte("k"), nil), ErrInvalidKey)
		assert.ErrorIs(t, tx.IndexPut("mem/a", "", []byte("k"), nil), ErrInvalidKey)
		assert.ErrorContains(t, tx.IndexPut("mem/a", "post", []byte("k"), make([]byte, MaxIndexValue+1)), "store less")
		assert.ErrorIs(t, tx.DropIndex(""), ErrInvalidKey)
		return nil
	})
	require.NoError(t, err)
	var saved *Tx
	require.NoError(t, s.View(func(tx *Tx) error { saved = tx; return nil }))
	assert.ErrorIs(t, saved.IndexPut("mem/a", "post", []byte("k"), nil), ErrTxClosed)
}

// A file written before the index space existed gains it on Open, and
// what it held survives.
func TestSchema_MigrateTo2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agnx.db")
	s, err := open(path, nil, migrations[:1])
	require.NoError(t, err)
	require.NoError(t, s.Update(func(tx *Tx) error { return tx.PutKV("k", []byte("v")) }))
	require.NoError(t, s.Close())
	require.Equal(t, uint64(1), rawVersion(t, path))

	s = mustOpenAt(t, path, nil)
	require.NoError(t, s.Update(func(tx *Tx) error {
		v, err := tx.KV("k")
		assert.Equal(t, []byte("v"), v)
		require.NoError(t, err)
		return tx.IndexPut("mem/a", "meta", []byte("n"), []byte("1"))
	}))
	require.NoError(t, s.View(func(tx *Tx) error {
		assert.NotNil(t, tx.btx.Bucket(bucketIndex))
		v, err := schemaVersion(tx.btx)
		assert.Equal(t, uint64(2), v)
		return err
	}))
}

func TestTx_IndexRange(t *testing.T) {
	s := MustOpen(t)
	require.NoError(t, s.Update(func(tx *Tx) error {
		for _, k := range []string{"a", "b", "c", "d"} {
			require.NoError(t, tx.IndexPut("usage", "c", []byte(k), []byte(k)))
		}
		return nil
	}))
	read := func(from, to string) []string {
		var got []string
		require.NoError(t, s.View(func(tx *Tx) error {
			return tx.IndexRange("usage", "c", []byte(from), []byte(to), func(k, _ []byte) error {
				got = append(got, string(k))
				return nil
			})
		}))
		return got
	}
	assert.Equal(t, []string{"b", "c"}, read("b", "d"))
	assert.Equal(t, []string{"b", "c", "d"}, read("am", ""))
	assert.Empty(t, read("e", ""))
	require.NoError(t, s.View(func(tx *Tx) error {
		return tx.IndexRange("absent", "c", nil, nil, func(k, _ []byte) error { return errors.New("called") })
	}))
}

// TestTx_IndexAppend: records keyed by time, one a commit as the usage
// ledger writes them, fill about half the pages with IndexAppend that
// they fill with IndexPut, and read back the same.
func TestTx_IndexAppend(t *testing.T) {
	leaves := func(put func(tx *Tx, k, v []byte) error) int {
		s := MustOpen(t)
		val := []byte(strings.Repeat("v", 80))
		for i := range 1000 {
			require.NoError(t, s.Update(func(tx *Tx) error {
				return put(tx, binary.BigEndian.AppendUint64(nil, uint64(i)), val)
			}))
		}
		n := 0
		require.NoError(t, s.View(func(tx *Tx) error {
			k, err := tx.indexKind("usage", "c", false)
			require.NoError(t, err)
			n = k.Stats().LeafPageN
			i := 0
			return tx.IndexScan("usage", "c", nil, func(k, v []byte) error {
				assert.Equal(t, uint64(i), binary.BigEndian.Uint64(k))
				assert.Equal(t, val, v)
				i++
				return nil
			})
		}))
		return n
	}
	put := leaves(func(tx *Tx, k, v []byte) error { return tx.IndexPut("usage", "c", k, v) })
	appended := leaves(func(tx *Tx, k, v []byte) error { return tx.IndexAppend("usage", "c", k, v) })
	t.Logf("leaf pages for 1,000 records: IndexPut %d, IndexAppend %d", put, appended)
	assert.LessOrEqual(t, appended*10, put*6, "IndexAppend should pack pages full")
}
