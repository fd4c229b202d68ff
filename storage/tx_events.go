package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	bolt "go.etcd.io/bbolt"
)

// AppendEvent stores data as event seq of the session. seq must be
// LastSeq+1; otherwise it returns a *SeqGapError (errors.Is ErrSeqGap)
// holding the expected seq, and stores nothing. data is copied.
func (tx *Tx) AppendEvent(id string, seq uint64, data []byte) error {
	// bbolt keeps the value slice until commit, so the event gets its own
	// memory, and one allocation: its first 8 bytes serve as the key.
	buf := make([]byte, EventHeader+len(data))
	copy(buf[EventHeader:], data)
	return tx.AppendEventOwned(id, seq, buf)
}

// appendFill is the FillPercent of tables whose keys only grow (events,
// IndexAppend's): their pages are split full, as nothing is ever inserted
// in the half bbolt's default leaves free.
const appendFill = 1.0

// EventHeader is the room AppendEventOwned needs before an event.
const EventHeader = 8

// AppendEventOwned is AppendEvent for an event encoded after the first
// EventHeader bytes of buf, which the store keeps, without a copy, until
// the transaction ends: the caller must not use buf again.
func (tx *Tx) AppendEventOwned(id string, seq uint64, buf []byte) error {
	if len(buf) < EventHeader {
		return fmt.Errorf("append event %d to session %q: %d bytes leave no room for its key", seq, id, len(buf))
	}
	a, err := tx.appender(id)
	if err != nil {
		return err
	}
	if seq != a.last+1 || seq == 0 {
		return &SeqGapError{Session: id, Got: seq, Want: a.last + 1}
	}
	binary.BigEndian.PutUint64(buf, seq)
	key := buf[:EventHeader:EventHeader] // the key and last_seq
	if err := a.events.Put(key, buf[EventHeader:]); err != nil {
		return fmt.Errorf("append event %d to session %q: %w", seq, id, err)
	}
	if err := a.session.Put(keyLastSeq, key); err != nil {
		return fmt.Errorf("append event %d to session %q: %w", seq, id, err)
	}
	a.last = seq
	return nil
}

// appender is the session a batch appends to, kept across AppendEvent
// calls in one transaction so a batch reads last_seq once.
type appender struct {
	id      string
	session *bolt.Bucket
	events  *bolt.Bucket
	last    uint64
}

func (tx *Tx) appender(id string) (*appender, error) {
	if a := &tx.app; a.session != nil && a.id == id && tx.btx != nil {
		return a, nil
	}
	sb, err := tx.session(id)
	if err != nil {
		return nil, err
	}
	eb := sb.Bucket(bucketEvents)
	eb.FillPercent = appendFill // keys only ever grow
	tx.app = appender{id: id, session: sb, events: eb, last: lastSeq(sb)}
	return &tx.app, nil
}

// LastSeq returns the seq of the last event ever appended to the session
// (0 if none), pruned or not.
func (tx *Tx) LastSeq(id string) (uint64, error) {
	sb, err := tx.session(id)
	if err != nil {
		return 0, err
	}
	return lastSeq(sb), nil
}

// FirstSeq returns the seq of the oldest event still stored (0 if none).
// It is above 1 once PruneEvents has run.
func (tx *Tx) FirstSeq(id string) (uint64, error) {
	sb, err := tx.session(id)
	if err != nil {
		return 0, err
	}
	if k, _ := sb.Bucket(bucketEvents).Cursor().First(); k != nil {
		return binary.BigEndian.Uint64(k), nil
	}
	return 0, nil
}

// Events calls fn for each stored event with seq > after, in seq order,
// and stops at the first error, which it returns unchanged. data points
// into the memory map and is valid only during fn. If events up to after
// were pruned, iteration starts at FirstSeq.
func (tx *Tx) Events(id string, after uint64, fn func(seq uint64, data []byte) error) error {
	sb, err := tx.session(id)
	if err != nil {
		return err
	}
	if after == math.MaxUint64 {
		return nil
	}
	c := sb.Bucket(bucketEvents).Cursor()
	for k, v := c.Seek(seqKey(after + 1)); k != nil; k, v = c.Next() {
		if err := fn(binary.BigEndian.Uint64(k), v); err != nil {
			return err
		}
	}
	return nil
}

// EventsCount returns how many events are stored for the session (pruned
// ones excluded). Seqs are contiguous, so it reads two keys, not the log.
func (tx *Tx) EventsCount(id string) (int, error) {
	sb, err := tx.session(id)
	if err != nil {
		return 0, err
	}
	c := sb.Bucket(bucketEvents).Cursor()
	first, _ := c.First()
	if first == nil {
		return 0, nil
	}
	last, _ := c.Last()
	return int(binary.BigEndian.Uint64(last) - binary.BigEndian.Uint64(first) + 1), nil
}

// PutCheckpoint stores state (copied) as the session's folded state after
// event seq, replacing a checkpoint at the same seq, then deletes all but
// the newest Options.CheckpointsKept. seq may not exceed LastSeq
// (ErrCheckpointAhead).
func (tx *Tx) PutCheckpoint(id string, seq uint64, state []byte) error {
	sb, err := tx.session(id)
	if err != nil {
		return err
	}
	if last := lastSeq(sb); seq > last {
		return fmt.Errorf("put checkpoint %d of session %q (last seq %d): %w", seq, id, last, ErrCheckpointAhead)
	}
	buf := make([]byte, 8+len(state))
	binary.BigEndian.PutUint64(buf, seq)
	copy(buf[8:], state)
	cb := sb.Bucket(bucketCheckpoints)
	if err := cb.Put(buf[:8:8], buf[8:]); err != nil {
		return fmt.Errorf("put checkpoint %d of session %q: %w", seq, id, err)
	}
	if err := trimCheckpoints(cb, tx.kept); err != nil {
		return fmt.Errorf("put checkpoint %d of session %q: %w", seq, id, err)
	}
	return nil
}

// trimCheckpoints deletes all but the newest kept keys. There are kept+1
// at most in steady state, so collecting them first costs nothing and
// avoids deleting under a moving cursor.
func trimCheckpoints(cb *bolt.Bucket, kept int) error {
	c := cb.Cursor()
	var cut []byte // oldest key to keep
	n := 0
	for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
		if n++; n == kept {
			cut = k
			break
		}
	}
	if cut == nil {
		return nil
	}
	var old [][]byte
	for k, _ := c.First(); k != nil && bytes.Compare(k, cut) < 0; k, _ = c.Next() {
		old = append(old, k)
	}
	for _, k := range old {
		if err := cb.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// LatestCheckpoint returns the newest checkpoint of the session: its seq
// and a copy of its state, or 0 and nil when there is none. Recovery is
// this plus Events(id, seq, ...).
func (tx *Tx) LatestCheckpoint(id string) (seq uint64, state []byte, err error) {
	sb, err := tx.session(id)
	if err != nil {
		return 0, nil, err
	}
	k, v := sb.Bucket(bucketCheckpoints).Cursor().Last()
	if k == nil {
		return 0, nil, nil
	}
	return binary.BigEndian.Uint64(k), clone(v), nil
}

// PruneEvents deletes the session's events with seq <= upto that the
// latest checkpoint covers (seq <= its seq), and returns how many it
// deleted. With no checkpoint it deletes nothing. LastSeq is unchanged,
// so appends continue where they were. The freed pages are reused; the
// file does not shrink.
func (tx *Tx) PruneEvents(id string, upto uint64) (int, error) {
	sb, err := tx.session(id)
	if err != nil {
		return 0, err
	}
	k, _ := sb.Bucket(bucketCheckpoints).Cursor().Last()
	if k == nil {
		return 0, nil
	}
	upto = min(upto, binary.BigEndian.Uint64(k))
	c := sb.Bucket(bucketEvents).Cursor()
	n := 0
	// Re-seek after each Delete: a bbolt cursor's position after Delete
	// is not something to lean on.
	for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) <= upto; k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return n, fmt.Errorf("prune events of session %q: %w", id, err)
		}
		n++
	}
	return n, nil
}
