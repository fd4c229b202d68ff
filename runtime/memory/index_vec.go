package memory

import (
	"context"
	"encoding/binary"

	"github.com/agnx-lite/agnx-lite/storage"
)

// embedPerSync bounds the entries one search embeds: a first sync of a
// big bank fills its vectors over several searches, never in one long
// wait. Entries without a vector are still found by keyword.
const embedPerSync = 128

// syncVectors computes the vectors entries lack. A changed model (or a
// first embedder) queues every entry again; a failed call leaves them
// queued for the next search.
func (x *Index) syncVectors(ctx context.Context) error {
	e := x.o.Embedder
	if e == nil {
		return nil
	}
	var model []byte
	if err := x.o.DB.View(func(tx *storage.Tx) (err error) {
		model, err = tx.IndexGet(x.scope, kindMeta, metaModel)
		return err
	}); err != nil {
		return err
	}
	if string(model) != e.Model() {
		if err := x.requeue(ctx, e.Model()); err != nil {
			return err
		}
	}
	var ids []uint64
	var texts []string
	if err := x.o.DB.View(func(tx *storage.Tx) error {
		return tx.IndexScan(x.scope, kindNoVec, nil, func(k, _ []byte) error {
			if len(ids) >= embedPerSync {
				return errStop
			}
			if len(k) != 8 {
				return nil
			}
			v, err := tx.IndexGet(x.scope, kindDoc, k)
			if err != nil || v == nil {
				return err
			}
			d, err := decodeDoc(v, false)
			if err != nil {
				return nil
			}
			ids = append(ids, binary.BigEndian.Uint64(k))
			texts = append(texts, embedText(d.heading, d.text))
			return nil
		})
	}); err != nil && err != errStop {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	vs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil // the entries stay queued; keyword search still finds them
	}
	w := &writer{x: x}
	for i, id := range ids {
		w.put(kindVec, idKey(id), quantize(vs[i]))
		w.del(kindNoVec, idKey(id))
	}
	return w.commitRaw(ctx)
}

// embedText is what is indexed of an entry: a Markdown heading is part
// of it, a session message's role is not.
func embedText(heading, text string) string {
	if heading != "" && heading[0] == '#' {
		return heading + "\n" + text
	}
	return text
}

// requeue drops every vector and queues every entry for the new model.
func (x *Index) requeue(ctx context.Context, model string) error {
	w := &writer{x: x}
	if err := x.o.DB.View(func(tx *storage.Tx) error {
		if err := tx.IndexScan(x.scope, kindVec, nil, func(k, _ []byte) error {
			w.del(kindVec, append([]byte(nil), k...))
			return nil
		}); err != nil {
			return err
		}
		return tx.IndexScan(x.scope, kindDoc, nil, func(k, _ []byte) error {
			w.put(kindNoVec, append([]byte(nil), k...), nil)
			return nil
		})
	}); err != nil {
		return err
	}
	w.put(kindMeta, metaModel, []byte(model))
	return w.commitRaw(ctx)
}

// vectorTop returns the ids of the k entries nearest to the vector q,
// best first.
func (x *Index) vectorTop(qv []float32, k int) ([]uint64, error) {
	q := quantize(qv)
	top := newTopK(k)
	err := x.o.DB.View(func(tx *storage.Tx) error {
		return tx.IndexScan(x.scope, kindVec, nil, func(key, v []byte) error {
			if len(key) == 8 {
				if s := cosine(q, v); s > -2 {
					top.push(binary.BigEndian.Uint64(key), s)
				}
			}
			return nil
		})
	})
	return top.ids(), err
}
