package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func update(t *testing.T, s *Store, fn func(tx *Tx) error) {
	t.Helper()
	require.NoError(t, s.Update(fn))
}

func view(t *testing.T, s *Store, fn func(tx *Tx) error) {
	t.Helper()
	require.NoError(t, s.View(fn))
}

// appendN appends events from..to to session id as "e<seq>".
func appendN(tx *Tx, id string, from, to uint64) error {
	for seq := from; seq <= to; seq++ {
		if err := tx.AppendEvent(id, seq, []byte(fmt.Sprintf("e%d", seq))); err != nil {
			return err
		}
	}
	return nil
}

// collect returns the events after `after` as "seq:data" strings.
func collect(tx *Tx, id string, after uint64) ([]string, error) {
	var out []string
	err := tx.Events(id, after, func(seq uint64, data []byte) error {
		out = append(out, fmt.Sprintf("%d:%s", seq, data))
		return nil
	})
	return out, err
}

func TestTx_SessionMeta(t *testing.T) {
	s := MustOpen(t)
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.CreateSession("a", []byte(`{"agent":"x"}`)))
		assert.ErrorIs(t, tx.CreateSession("a", nil), ErrSessionExists)
		assert.ErrorIs(t, tx.CreateSession("", nil), ErrInvalidKey)
		assert.ErrorIs(t, tx.CreateSession(strings.Repeat("x", MaxKeySize+1), nil), ErrInvalidKey)
		assert.ErrorIs(t, tx.PutMeta("nope", nil), ErrSessionNotFound)
		return nil
	})
	var kept []byte
	view(t, s, func(tx *Tx) error {
		m, err := tx.Meta("a")
		kept = m
		assert.Equal(t, `{"agent":"x"}`, string(m))
		_, err2 := tx.Meta("nope")
		assert.ErrorIs(t, err2, ErrSessionNotFound)
		return err
	})
	meta := []byte(`{"agent":"y"}`)
	update(t, s, func(tx *Tx) error { return tx.PutMeta("a", meta) })
	meta[10] = 'z' // the store took a copy
	assert.Equal(t, `{"agent":"x"}`, string(kept), "Meta returned a copy")
	view(t, s, func(tx *Tx) error {
		m, err := tx.Meta("a")
		assert.Equal(t, `{"agent":"y"}`, string(m))
		return err
	})
}

func TestTx_AppendEventsAndGap(t *testing.T) {
	s := MustOpen(t)
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.CreateSession("a", nil))
		return appendN(tx, "a", 1, 5)
	})
	update(t, s, func(tx *Tx) error {
		for _, seq := range []uint64{0, 5, 7} {
			err := tx.AppendEvent("a", seq, []byte("x"))
			var gap *SeqGapError
			require.ErrorAs(t, err, &gap)
			assert.ErrorIs(t, err, ErrSeqGap)
			assert.Equal(t, uint64(6), gap.Want)
			assert.Equal(t, seq, gap.Got)
		}
		assert.EqualError(t, tx.AppendEvent("a", 9, nil), `append event to session "a": seq 9 given, 6 expected`)
		assert.ErrorIs(t, tx.AppendEvent("nope", 1, nil), ErrSessionNotFound)
		buf := []byte("e6")
		require.NoError(t, tx.AppendEvent("a", 6, buf))
		buf[1] = 'X' // reusing the caller's buffer must not change the event
		return nil
	})
	view(t, s, func(tx *Tx) error {
		last, err := tx.LastSeq("a")
		require.NoError(t, err)
		assert.Equal(t, uint64(6), last)
		n, err := tx.EventsCount("a")
		require.NoError(t, err)
		assert.Equal(t, 6, n)
		all, err := collect(tx, "a", 0)
		assert.Equal(t, []string{"1:e1", "2:e2", "3:e3", "4:e4", "5:e5", "6:e6"}, all)
		return err
	})
}

// An owned event is stored from after its header, which becomes its key;
// a buffer with no room for the key is refused, and a gap is a gap.
func TestTx_AppendEventOwned(t *testing.T) {
	s := MustOpen(t)
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.CreateSession("a", nil))
		require.NoError(t, tx.AppendEventOwned("a", 1, append(make([]byte, EventHeader), "e1"...)))
		require.NoError(t, tx.AppendEvent("a", 2, []byte("e2")))
		require.NoError(t, tx.AppendEventOwned("a", 3, append([]byte("garbage!"), "e3"...)), "the header's bytes are the store's")
		assert.EqualError(t, tx.AppendEventOwned("a", 4, []byte("short")), `append event 4 to session "a": 5 bytes leave no room for its key`)
		assert.ErrorIs(t, tx.AppendEventOwned("a", 5, make([]byte, EventHeader)), ErrSeqGap)
		return nil
	})
	view(t, s, func(tx *Tx) error {
		all, err := collect(tx, "a", 0)
		require.NoError(t, err)
		assert.Equal(t, []string{"1:e1", "2:e2", "3:e3"}, all)
		last, err := tx.LastSeq("a")
		require.NoError(t, err)
		assert.Equal(t, uint64(3), last)
		return nil
	})
}

func TestTx_EventsAfter(t *testing.T) {
	s := MustOpen(t)
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.CreateSession("a", nil))
		require.NoError(t, tx.CreateSession("empty", nil))
		return appendN(tx, "a", 1, 10)
	})
	view(t, s, func(tx *Tx) error {
		for after, want := range map[uint64][]string{
			7:          {"8:e8", "9:e9", "10:e10"},
			9:          {"10:e10"},
			10:         nil,
			1 << 63:    nil,
			^uint64(0): nil,
		} {
			got, err := collect(tx, "a", after)
			require.NoError(t, err)
			assert.Equal(t, want, got, "after %d", after)
		}
		got, err := collect(tx, "empty", 0)
		require.NoError(t, err)
		assert.Empty(t, got)
		n, _ := tx.EventsCount("empty")
		assert.Zero(t, n)

		stop := errors.New("stop")
		seen := 0
		err = tx.Events("a", 0, func(uint64, []byte) error { seen++; return stop })
		assert.Same(t, stop, err)
		assert.Equal(t, 1, seen)
		return nil
	})
}

func TestTx_CheckpointRetention(t *testing.T) {
	s := mustOpenAt(t, filepath.Join(t.TempDir(), "agnx.db"), &Options{CheckpointsKept: 3})
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.CreateSession("a", nil))
		seq, st, err := tx.LatestCheckpoint("a")
		assert.Zero(t, seq)
		assert.Nil(t, st)
		require.NoError(t, err)
		require.NoError(t, appendN(tx, "a", 1, 50))
		assert.ErrorIs(t, tx.PutCheckpoint("a", 51, nil), ErrCheckpointAhead)
		assert.ErrorIs(t, tx.PutCheckpoint("nope", 1, nil), ErrSessionNotFound)
		for seq := uint64(10); seq <= 50; seq += 10 {
			require.NoError(t, tx.PutCheckpoint("a", seq, []byte(fmt.Sprintf("state@%d", seq))))
		}
		return nil
	})
	view(t, s, func(tx *Tx) error {
		seq, st, err := tx.LatestCheckpoint("a")
		assert.Equal(t, uint64(50), seq)
		assert.Equal(t, "state@50", string(st))
		var keys []uint64
		c := tx.btx.Bucket(bucketSessions).Bucket([]byte("a")).Bucket(bucketCheckpoints).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			keys = append(keys, uint64(k[7]))
		}
		assert.Equal(t, []uint64{30, 40, 50}, keys)
		return err
	})
	// Same seq replaces; still three kept.
	update(t, s, func(tx *Tx) error { return tx.PutCheckpoint("a", 50, []byte("again")) })
	view(t, s, func(tx *Tx) error {
		_, st, err := tx.LatestCheckpoint("a")
		assert.Equal(t, "again", string(st))
		return err
	})
}

func TestTx_PruneKeepsLastSeq(t *testing.T) {
	s := MustOpen(t)
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.CreateSession("a", nil))
		require.NoError(t, appendN(tx, "a", 1, 100))
		n, err := tx.PruneEvents("a", 90)
		assert.Zero(t, n, "nothing is covered without a checkpoint")
		require.NoError(t, err)
		return tx.PutCheckpoint("a", 60, []byte("s"))
	})
	update(t, s, func(tx *Tx) error {
		n, err := tx.PruneEvents("a", 90) // capped at the checkpoint
		assert.Equal(t, 60, n)
		return err
	})
	view(t, s, func(tx *Tx) error {
		last, _ := tx.LastSeq("a")
		first, _ := tx.FirstSeq("a")
		count, _ := tx.EventsCount("a")
		assert.Equal(t, []uint64{100, 61, 40}, []uint64{last, first, uint64(count)})
		got, err := collect(tx, "a", 10)
		assert.Len(t, got, 40)
		assert.Equal(t, "61:e61", got[0])
		return err
	})
	update(t, s, func(tx *Tx) error {
		assert.ErrorIs(t, tx.AppendEvent("a", 1, nil), ErrSeqGap)
		require.NoError(t, tx.AppendEvent("a", 101, []byte("e101")))
		require.NoError(t, tx.PutCheckpoint("a", 101, nil))
		n, err := tx.PruneEvents("a", 1000)
		assert.Equal(t, 41, n)
		return err
	})
	view(t, s, func(tx *Tx) error {
		last, _ := tx.LastSeq("a")
		first, _ := tx.FirstSeq("a")
		count, err := tx.EventsCount("a")
		assert.Equal(t, []uint64{101, 0, 0}, []uint64{last, first, uint64(count)})
		return err
	})
	require.NoError(t, s.Check())
}

func TestTx_ActiveSessionsAndList(t *testing.T) {
	s := MustOpen(t)
	update(t, s, func(tx *Tx) error {
		for _, id := range []string{"c", "a", "b"} {
			require.NoError(t, tx.CreateSession(id, []byte("m-"+id)))
		}
		require.NoError(t, tx.SetActive("b", true))
		require.NoError(t, tx.SetActive("c", true))
		require.NoError(t, tx.SetActive("c", true))
		require.NoError(t, tx.SetActive("a", false), "clearing an absent mark")
		assert.ErrorIs(t, tx.SetActive("nope", true), ErrSessionNotFound)
		return nil
	})
	view(t, s, func(tx *Tx) error {
		var active, all []string
		require.NoError(t, tx.ActiveSessions(func(id string) error { active = append(active, id); return nil }))
		require.NoError(t, tx.Sessions(func(id string, meta []byte) error {
			all = append(all, id+"="+string(meta))
			return nil
		}))
		assert.Equal(t, []string{"b", "c"}, active)
		assert.Equal(t, []string{"a=m-a", "b=m-b", "c=m-c"}, all)
		return nil
	})
	update(t, s, func(tx *Tx) error { return tx.SetActive("b", false) })
	view(t, s, func(tx *Tx) error {
		n := 0
		return tx.ActiveSessions(func(id string) error { n++; assert.Equal(t, "c", id); return nil })
	})
}

func TestTx_DeleteSession(t *testing.T) {
	s := MustOpen(t)
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.CreateSession("a", []byte("m")))
		require.NoError(t, appendN(tx, "a", 1, 500))
		require.NoError(t, tx.PutCheckpoint("a", 500, []byte("st")))
		require.NoError(t, tx.SetActive("a", true))
		return tx.CreateSession("b", nil)
	})
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.DeleteSession("a"))
		assert.ErrorIs(t, tx.DeleteSession("a"), ErrSessionNotFound)
		return nil
	})
	view(t, s, func(tx *Tx) error {
		_, err := tx.Meta("a")
		assert.ErrorIs(t, err, ErrSessionNotFound)
		_, err = tx.LastSeq("a")
		assert.ErrorIs(t, err, ErrSessionNotFound)
		require.NoError(t, tx.ActiveSessions(func(id string) error { return fmt.Errorf("still active: %s", id) }))
		return nil
	})
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.CreateSession("a", nil), "the id can be reused")
		last, err := tx.LastSeq("a")
		assert.Zero(t, last)
		return err
	})
	require.NoError(t, s.Check())
}

func TestTx_KV(t *testing.T) {
	s := MustOpen(t)
	val := []byte("42")
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.PutKV("telegram/offset", val))
		require.NoError(t, tx.PutKV("empty", nil))
		assert.ErrorIs(t, tx.PutKV("", nil), ErrInvalidKey)
		return nil
	})
	val[0] = '9'
	view(t, s, func(tx *Tx) error {
		v, err := tx.KV("telegram/offset")
		assert.Equal(t, "42", string(v))
		e, _ := tx.KV("empty")
		assert.NotNil(t, e, "present but empty")
		assert.Empty(t, e)
		missing, _ := tx.KV("missing")
		assert.Nil(t, missing)
		return err
	})
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.DeleteKV("telegram/offset"))
		return tx.DeleteKV("never-there")
	})
	view(t, s, func(tx *Tx) error {
		v, err := tx.KV("telegram/offset")
		assert.Nil(t, v)
		return err
	})
}

func TestTx_UsedAfterClosure(t *testing.T) {
	s := MustOpen(t)
	var leaked *Tx
	update(t, s, func(tx *Tx) error { leaked = tx; return tx.CreateSession("a", nil) })
	assert.ErrorIs(t, leaked.PutKV("k", nil), ErrTxClosed)
	_, err := leaked.Meta("a")
	assert.ErrorIs(t, err, ErrTxClosed)
}

// A 10,000-event session recovers from its checkpoint plus the tail.
func TestTx_LongSessionRecovery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agnx.db")
	s, err := Open(path, nil)
	require.NoError(t, err)
	update(t, s, func(tx *Tx) error { return tx.CreateSession("long", nil) })
	for from := uint64(1); from <= 10_000; from += 500 {
		update(t, s, func(tx *Tx) error {
			if err := appendN(tx, "long", from, from+499); err != nil {
				return err
			}
			if from+499 >= 9_950 && from <= 9_950 {
				return tx.PutCheckpoint("long", 9_950, []byte("state@9950"))
			}
			return nil
		})
	}
	require.NoError(t, s.Close())

	s = mustOpenAt(t, path, nil)
	view(t, s, func(tx *Tx) error {
		seq, st, err := tx.LatestCheckpoint("long")
		require.NoError(t, err)
		assert.Equal(t, uint64(9_950), seq)
		assert.Equal(t, "state@9950", string(st))
		tail, err := collect(tx, "long", seq)
		require.Len(t, tail, 50)
		for i, ev := range tail {
			assert.Equal(t, fmt.Sprintf("%d:e%d", 9_951+i, 9_951+i), ev)
		}
		n, _ := tx.EventsCount("long")
		assert.Equal(t, 10_000, n)
		return err
	})
	require.NoError(t, s.Check())
}

// Interleaved appends, and delete then re-create, inside one transaction.
func TestTx_AppendInterleavedSessions(t *testing.T) {
	s := MustOpen(t)
	update(t, s, func(tx *Tx) error {
		require.NoError(t, tx.CreateSession("a", nil))
		require.NoError(t, tx.CreateSession("b", nil))
		for seq := uint64(1); seq <= 3; seq++ {
			require.NoError(t, tx.AppendEvent("a", seq, []byte("a")))
			require.NoError(t, tx.AppendEvent("b", seq, []byte("b")))
		}
		require.NoError(t, tx.DeleteSession("a"))
		assert.ErrorIs(t, tx.AppendEvent("a", 4, nil), ErrSessionNotFound)
		require.NoError(t, tx.CreateSession("a", nil))
		return tx.AppendEvent("a", 1, []byte("new"))
	})
	view(t, s, func(tx *Tx) error {
		a, err := collect(tx, "a", 0)
		require.NoError(t, err)
		b, err := collect(tx, "b", 0)
		assert.Equal(t, []string{"1:new"}, a)
		assert.Equal(t, []string{"1:b", "2:b", "3:b"}, b)
		return err
	})
}
