package memory

import (
	"context"
	"encoding/binary"
	"errors"
	"unicode/utf8"

	"github.com/agnx-lite/agnx-lite/storage"
)

// commitOps is how many puts and deletes one commit carries at most
// (give or take one file's or one session's): a first sync of a big bank
// goes in several commits, so the loop's transaction stays short.
const commitOps = 20000

type op struct {
	kind     string
	key, val []byte
	del      bool
}

// writer gathers the changes of a sync, computed off the loop, and
// commits them in bounded batches with the meta that goes with them.
type writer struct {
	x     *Index
	ops   []op
	n     uint64 // documents
	total uint64 // their summed length
	next  uint64 // next doc id
	embed bool   // new docs wait for a vector
}

func (w *writer) put(kind string, key, val []byte) {
	w.ops = append(w.ops, op{kind: kind, key: key, val: val})
}

func (w *writer) del(kind string, key []byte) {
	w.ops = append(w.ops, op{kind: kind, key: key, del: true})
}

// readMeta loads the counters a sync starts from.
func (w *writer) readMeta(tx *storage.Tx) error {
	for _, m := range []struct {
		key []byte
		dst *uint64
	}{{metaN, &w.n}, {metaLen, &w.total}, {metaNext, &w.next}} {
		v, err := tx.IndexGet(w.x.scope, kindMeta, m.key)
		if err != nil {
			return err
		}
		*m.dst = uvarintOf(v)
	}
	w.next = max(w.next, 1)
	return nil
}

// add indexes one entry and returns its id.
func (w *writer) add(source string, c chunk) uint64 {
	id := w.next
	w.next++
	tf, length := termFreqs(embedText(c.heading, c.text))
	for t, n := range tf {
		v := binary.AppendUvarint(nil, uint64(n))
		w.put(kindPost, postKey(t, id), binary.AppendUvarint(v, uint64(length)))
	}
	d := docRec{source: source, heading: cut(c.heading, maxHeading), date: c.date, length: uint64(length),
		text: cut(c.text, maxText), terms: tf}
	w.put(kindDoc, idKey(id), d.encode())
	if w.embed {
		w.put(kindNoVec, idKey(id), nil)
	}
	w.n++
	w.total += uint64(length)
	return id
}

// remove takes entries out of the index; ids already gone are skipped.
func (w *writer) remove(ids []uint64) error {
	return w.x.o.DB.View(func(tx *storage.Tx) error {
		for _, id := range ids {
			v, err := tx.IndexGet(w.x.scope, kindDoc, idKey(id))
			if err != nil {
				return err
			}
			if v == nil {
				continue
			}
			d, err := decodeDoc(v, true)
			if err != nil {
				continue // damaged: its postings stay, pointing at nothing, and are skipped
			}
			for t := range d.terms {
				w.del(kindPost, postKey(t, id))
			}
			for _, k := range []string{kindDoc, kindVec, kindNoVec} {
				w.del(k, idKey(id))
			}
			w.n = max(w.n, 1) - 1
			w.total -= min(w.total, d.length)
		}
		return nil
	})
}

// flush commits what was gathered, with the counters.
func (w *writer) flush(ctx context.Context) error {
	if len(w.ops) == 0 {
		return nil
	}
	w.put(kindMeta, metaN, binary.AppendUvarint(nil, w.n))
	w.put(kindMeta, metaLen, binary.AppendUvarint(nil, w.total))
	w.put(kindMeta, metaNext, binary.AppendUvarint(nil, w.next))
	return w.commitRaw(ctx)
}

// commitRaw commits the gathered ops as they are.
func (w *writer) commitRaw(ctx context.Context) error {
	if len(w.ops) == 0 {
		return nil
	}
	ops, scope := w.ops, w.x.scope
	w.ops = nil
	return w.x.o.DB.Commit(ctx, func(tx *storage.Tx) error {
		for _, o := range ops {
			var err error
			if o.del {
				err = tx.IndexDelete(scope, o.kind, o.key)
			} else {
				err = tx.IndexPut(scope, o.kind, o.key, o.val)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// maybeFlush commits once enough is gathered.
func (w *writer) maybeFlush(ctx context.Context) error {
	if len(w.ops) < commitOps {
		return nil
	}
	return w.flush(ctx)
}

// cut returns s cut to at most n bytes, at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

var errStop = errors.New("stop")
