package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/storage"
)

// Reads do not go through the inbox: bbolt readers never block the
// writer, and everything read here is committed. Gateways read through
// these Loop methods; the functions below them serve the CLI's read-only
// commands, which open the database without a loop.

// Sessions returns every session's meta record, newest first.
func (l *Loop) Sessions(context.Context) ([]SessionInfo, error) { return ListSessions(l.opts.Store) }

// Events calls fn for each committed event of the session after seq
// after, in order. fn must not block for long: the read holds a read
// transaction (Follow pages its catch-up for that reason).
func (l *Loop) Events(_ context.Context, sessionID string, after uint64, fn func(Event) error) error {
	return ReadEvents(l.opts.Store, sessionID, after, fn)
}

// KV reads one kv entry (nil when absent).
func (l *Loop) KV(_ context.Context, key string) ([]byte, error) { return ReadKV(l.opts.Store, key) }

// PutKV writes one kv entry in the loop's next group commit (the fsync it
// shares with the events being committed); it returns once the entry is
// durable. A nil val deletes the entry.
func (l *Loop) PutKV(ctx context.Context, key string, val []byte) error {
	reply := make(chan result[struct{}], 1)
	_, err := call(ctx, l, &putKVReq{key: key, val: append([]byte(nil), val...), del: val == nil, reply: reply}, reply)
	return err
}

type putKVReq struct {
	key   string
	val   []byte
	del   bool
	reply chan result[struct{}]
}

func (r *putKVReq) handle(l *Loop) {
	key, val, del := r.key, r.val, r.del
	l.ops = append(l.ops, func(tx *storage.Tx) error {
		if del {
			return tx.DeleteKV(key)
		}
		return tx.PutKV(key, val)
	})
	l.afterCommit(func(err error) { r.reply <- result[struct{}]{err: err} })
}

// Session returns what listings show of one session.
func (l *Loop) Session(ctx context.Context, sessionID string) (SessionInfo, error) {
	return ReadSession(l.opts.Store, sessionID)
}

// ReadSession reads a session's meta record from the store. Reads do not go
// through the loop: bbolt readers never block the writer, and the meta
// record is rewritten at every commit that touches the session.
func ReadSession(st *storage.Store, sessionID string) (SessionInfo, error) {
	var info SessionInfo
	err := st.View(func(tx *storage.Tx) error {
		meta, err := tx.Meta(sessionID)
		if err != nil {
			return err
		}
		var p fastjsonParser
		info, err = decodeInfo(&p, meta)
		return err
	})
	if errors.Is(err, storage.ErrSessionNotFound) {
		return info, ErrSessionNotFound
	}
	return info, err
}

// SessionRef tells the agent, principal and parent of a session this
// loop created, imported or loaded, without reading the database; ok is
// false for the others (read their record with Session).
func (l *Loop) SessionRef(id string) (ref SessionRef, ok bool) {
	v, ok := l.owners.Load(id)
	if !ok {
		return SessionRef{}, false
	}
	return v.(SessionRef), true
}

// SessionAgent is the agent of SessionRef.
func (l *Loop) SessionAgent(id string) (agent string, ok bool) {
	r, ok := l.SessionRef(id)
	return r.Agent, ok
}

// SessionIDs returns every session's id, reading none of their records
// (see storage.Tx.SessionIDs).
func (l *Loop) SessionIDs(context.Context) ([]string, error) {
	var out []string
	err := l.opts.Store.View(func(tx *storage.Tx) error {
		return tx.SessionIDs(func(id string) error { out = append(out, id); return nil })
	})
	return out, err
}

// ListSessions returns every session's meta record, newest first.
func ListSessions(st *storage.Store) ([]SessionInfo, error) {
	var out []SessionInfo
	var p fastjsonParser
	err := st.View(func(tx *storage.Tx) error {
		return tx.Sessions(func(id string, meta []byte) error {
			info, err := decodeInfo(&p, meta)
			if err != nil {
				return fmt.Errorf("session %s: %w", id, err)
			}
			out = append(out, info)
			return nil
		})
	})
	sortSessions(out)
	return out, err
}

// ReadEvents calls fn for each event of the session after seq `after`,
// in seq order: those retention moved to the session's archive file
// first, then the stored ones. An archive that cannot be read to its end
// gives an *ArchiveDamagedError after every other event was delivered.
func ReadEvents(st *storage.Store, sessionID string, after uint64, fn func(Event) error) error {
	if after == math.MaxUint64 {
		return nil
	}
	r := eventReader{st: st, id: sessionID, next: after + 1, fn: fn}
	err := r.read()
	if errors.Is(err, storage.ErrSessionNotFound) {
		return ErrSessionNotFound
	}
	if err == nil {
		err = r.damage
	}
	return err
}

// eventReader delivers a session's events once each, from seq next on.
type eventReader struct {
	st     *storage.Store
	id     string
	next   uint64 // the lowest seq not delivered yet
	fn     func(Event) error
	p      fastjsonParser
	damage error // the archive's, returned at the end
}

// errPruned stops a read of the stored events that finds the ones it
// needs were archived since the archive was read.
var errPruned = errors.New("pruned meanwhile")

func (r *eventReader) read() error {
	var seen []byte // the archive length recorded when it was last read
	archived := false
	for try := 0; ; try++ {
		err := r.st.View(func(tx *storage.Tx) error {
			first, err := tx.FirstSeq(r.id)
			if err != nil {
				return err
			}
			if first == 0 { // none stored: all pruned, or none yet
				last, err := tx.LastSeq(r.id)
				if err != nil {
					return err
				}
				first = last + 1
			}
			if first > r.next && try < 3 {
				// Pruned below: read the archive, unless it was read
				// already and no pass archived more since.
				kv, err := tx.KV(archiveKey(r.id))
				if err != nil {
					return err
				}
				if !archived || !bytes.Equal(kv, seen) {
					seen = kv
					return errPruned
				}
			}
			return tx.Events(r.id, r.next-1, func(seq uint64, data []byte) error {
				e, err := DecodeEvent(&r.p, data)
				if err != nil {
					return fmt.Errorf("session %s event %d: %w", r.id, seq, err)
				}
				r.next = seq + 1
				return r.fn(e)
			})
		})
		if !errors.Is(err, errPruned) {
			return err
		}
		if err := r.readArchive(committedLength(seen)); err != nil {
			return err
		}
		archived = true
	}
}

// readArchive delivers the archived events from r.next on, keeping the
// first line of each seq. It reads the first length bytes of the file:
// the rest, if any, is a pass that did not commit (its events are still
// stored), perhaps torn by a crash.
func (r *eventReader) readArchive(length int64) error {
	name := archiveName(r.id)
	if name == "" || length <= 0 {
		return nil
	}
	path := filepath.Join(ArchiveDir(r.st), name)
	err := readArchive(path, length, r.next, func(line []byte) error {
		e, err := DecodeEvent(&r.p, line)
		if err != nil || e.Seq < r.next {
			return nil // unparsable lines are skipped, as Agnx's readers do
		}
		r.next = e.Seq + 1
		return r.fn(e)
	})
	var dmg *ArchiveDamagedError
	if errors.As(err, &dmg) {
		r.damage = err
		return nil
	}
	return err
}

// ReadKV reads one kv entry (nil when absent).
func ReadKV(st *storage.Store, key string) ([]byte, error) {
	var v []byte
	err := st.View(func(tx *storage.Tx) error {
		var err error
		v, err = tx.KV(key)
		return err
	})
	return v, err
}
