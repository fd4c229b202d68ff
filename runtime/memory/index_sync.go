package memory

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// maxEvents bounds the session events one sync reads; the rest wait for
// the next search.
const maxEvents = 5000

// maxMessageChunks bounds the entries one long message becomes.
const maxMessageChunks = 4

// sync brings the index up to date with the files and sessions.
func (x *Index) sync(ctx context.Context) error {
	w := &writer{x: x, embed: x.o.Embedder != nil}
	files := make(map[string]fileRec)
	sess := make(map[string]uint64)
	var fmtOK bool
	err := x.o.DB.View(func(tx *storage.Tx) error {
		v, err := tx.IndexGet(x.scope, kindMeta, metaFormat)
		if err != nil || string(v) != format {
			return err
		}
		fmtOK = true
		if err := w.readMeta(tx); err != nil {
			return err
		}
		if err := tx.IndexScan(x.scope, kindFile, nil, func(k, v []byte) error {
			if f, err := decodeFile(v); err == nil {
				files[string(k)] = f
			}
			return nil
		}); err != nil {
			return err
		}
		return tx.IndexScan(x.scope, kindSess, nil, func(k, v []byte) error {
			sess[string(k)] = uvarintOf(v)
			return nil
		})
	})
	if err != nil {
		return err
	}
	if !fmtOK { // new, or written by another layout: start over
		scope := x.scope
		if err := x.o.DB.Commit(ctx, func(tx *storage.Tx) error {
			if err := tx.DropIndex(scope); err != nil {
				return err
			}
			return tx.IndexPut(scope, kindMeta, metaFormat, []byte(format))
		}); err != nil {
			return err
		}
		w.next = 1
	}
	if err := x.syncFiles(ctx, w, files); err != nil {
		return err
	}
	if err := x.syncSessions(ctx, w, sess); err != nil {
		return err
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
	return x.syncVectors(ctx)
}

// syncFiles re-chunks the files that changed, appeared or went away.
func (x *Index) syncFiles(ctx context.Context, w *writer, known map[string]fileRec) error {
	rs, err := openRoots(x.o.MemoryDir, x.o.WorldDir)
	if err != nil {
		return err
	}
	defer rs.close()
	for _, f := range rs.list() {
		old, had := known[f.source]
		delete(known, f.source)
		if had && old.size == f.size && old.mtime == f.mtime.UnixNano() {
			continue
		}
		content, hash, err := f.read()
		if err != nil {
			continue // gone or swapped since the listing: as if absent, next time
		}
		rec := fileRec{size: f.size, mtime: f.mtime.UnixNano(), hash: hash, ids: old.ids}
		if !had || old.hash != hash {
			if err := w.remove(old.ids); err != nil {
				return err
			}
			rec.ids = nil
			for _, c := range f.chunks(content) {
				rec.ids = append(rec.ids, w.add(f.source, c))
			}
		}
		w.put(kindFile, []byte(f.source), rec.encode())
		if err := w.maybeFlush(ctx); err != nil {
			return err
		}
	}
	for source, old := range known { // removed files
		if err := w.remove(old.ids); err != nil {
			return err
		}
		w.del(kindFile, []byte(source))
	}
	return nil
}

// syncSessions indexes the messages of the agent's sessions added since
// the last sync, at most maxEvents events per call, and forgets those of
// sessions deleted since.
func (x *Index) syncSessions(ctx context.Context, w *writer, known map[string]uint64) error {
	ids, err := x.sessionIDs(ctx)
	if err != nil {
		return err
	}
	budget := maxEvents
	for _, id := range ids {
		last, had := known[id]
		delete(known, id)
		if budget <= 0 {
			continue
		}
		var msgs []runtime.Event
		seen := last
		err := x.o.DB.Events(ctx, id, last, func(e runtime.Event) error {
			if budget <= 0 {
				return errStop
			}
			budget--
			seen = e.Seq
			if (e.Type == runtime.EvUserMessage || e.Type == runtime.EvAssistant) && strings.TrimSpace(e.Content) != "" {
				msgs = append(msgs, e)
			}
			return nil
		})
		if errors.Is(err, runtime.ErrSessionNotFound) {
			if had {
				known[id] = last // forgotten below with the deleted ones
			}
			continue
		}
		if err != nil && !errors.Is(err, errStop) {
			return err
		}
		for _, e := range msgs {
			for i, p := range pack(cut(e.Content, maxMessageChunks*maxChunk), maxChunk) {
				if i >= maxMessageChunks {
					break
				}
				cid := w.add(sessionSource+id, chunk{heading: role(e.Type), text: p, date: e.Time})
				w.put(kindSDoc, append([]byte(id+"\x00"), idKey(cid)...), nil)
			}
		}
		if seen > last || !had {
			w.put(kindSess, []byte(id), binary.AppendUvarint(nil, seen))
		}
		if err := w.maybeFlush(ctx); err != nil {
			return err
		}
	}
	for id := range known { // deleted sessions
		if err := x.forgetSession(w, id); err != nil {
			return err
		}
	}
	return nil
}

// sessionSource starts the Source of a session's hit: "session <id>".
const sessionSource = "session "

// sessionRefs is a DB that knows, without reading the database, the
// agent, principal and parent of the sessions it has seen (runtime.Loop).
type sessionRefs interface {
	SessionRef(id string) (runtime.SessionRef, bool)
}

// sessionIDs are the agent's sessions. Listing the ids reads only the
// sessions folder's own pages; a session's record (its agent, principal
// and parent, none of which changes) is read once, through the Shared
// cache.
func (x *Index) sessionIDs(ctx context.Context) ([]string, error) {
	ids, err := x.o.DB.SessionIDs(ctx)
	if err != nil {
		return nil, err
	}
	known, _ := x.o.DB.(sessionRefs)
	o := x.o.Shared
	o.mu.Lock()
	defer o.mu.Unlock()
	live := make(map[string]runtime.SessionRef, len(ids))
	var mine []string
	for _, id := range ids {
		ref, ok := o.refs[id]
		if !ok && known != nil {
			ref, ok = known.SessionRef(id)
		}
		if !ok {
			info, err := x.o.DB.Session(ctx, id)
			if errors.Is(err, runtime.ErrSessionNotFound) {
				continue // deleted since the listing
			}
			if err != nil {
				return nil, err
			}
			ref = info.Ref()
		}
		live[id] = ref
		if ref.Agent == x.o.Agent {
			mine = append(mine, id)
		}
	}
	o.refs = live // sessions deleted since the last listing drop out
	return mine, nil
}

func (x *Index) forgetSession(w *writer, sid string) error {
	var ids []uint64
	var keys [][]byte
	prefix := []byte(sid + "\x00")
	if err := x.o.DB.View(func(tx *storage.Tx) error {
		return tx.IndexScan(x.scope, kindSDoc, prefix, func(k, _ []byte) error {
			if len(k) == len(prefix)+8 {
				ids = append(ids, binary.BigEndian.Uint64(k[len(prefix):]))
			}
			keys = append(keys, append([]byte(nil), k...))
			return nil
		})
	}); err != nil {
		return err
	}
	if err := w.remove(ids); err != nil {
		return err
	}
	for _, k := range keys {
		w.del(kindSDoc, k)
	}
	w.del(kindSess, []byte(sid))
	return nil
}

// role is a message's heading in a hit.
func role(t runtime.EventType) string {
	if t == runtime.EvAssistant {
		return "assistant"
	}
	return "user"
}
