package memory

import (
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/agnx-lite/agnx-lite/storage"
)

// BM25's parameters, the usual ones.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// search ranks the index for text: BM25, fused with the vectors' ranking
// when an embedder is set and answers. visible, when set, says which
// hits may be shown (by their source).
func (x *Index) search(ctx context.Context, text string, limit int, visible func(string) bool) (Results, error) {
	res := Results{Mode: "keyword"}
	if strings.TrimSpace(text) == "" {
		return res, nil
	}
	k := max(limit*4, 50)
	kw, scores, err := x.keywordTop(text, k)
	if err != nil {
		return res, fmt.Errorf("search the memory index of %s: %w", x.o.Agent, err)
	}
	final := scores
	if e := x.o.Embedder; e != nil {
		vs, err := e.Embed(ctx, []string{text})
		var q []float32
		if err == nil && len(vs) == 1 {
			q = normalize(vs[0])
		}
		switch {
		case err != nil:
			res.Note = fmt.Sprintf("The embeddings endpoint failed (%s), so these are keyword results only.", cut(err.Error(), 300))
		case q == nil:
			res.Note = "The embeddings endpoint returned an empty vector for the query, so these are keyword results only."
		default:
			vec, err := x.vectorTop(q, k)
			if err != nil {
				return res, fmt.Errorf("search the memory index of %s: %w", x.o.Agent, err)
			}
			final = fuse(kw, vec)
			res.Mode = "hybrid"
		}
	}
	res.Hits, err = x.pick(final, limit, visible)
	return res, err
}

// pick reads the best limit entries of scores that visible lets through.
// It reads the best limit first; only when visible left some out does it
// look further down, four times as far each time.
func (x *Index) pick(scores map[uint64]float64, limit int, visible func(string) bool) ([]Hit, error) {
	for want := limit; ; want = min(want*4, len(scores)) {
		top := newTopK(want)
		for id, s := range scores {
			top.push(id, s)
		}
		ids := top.ids()
		var hits []Hit
		err := x.o.DB.View(func(tx *storage.Tx) error {
			for _, id := range ids {
				if len(hits) == limit {
					return nil
				}
				v, err := tx.IndexGet(x.scope, kindDoc, idKey(id))
				if err != nil {
					return err
				}
				d, err := decodeDoc(v, false)
				if v == nil || err != nil {
					continue // removed or damaged: a posting left behind
				}
				if visible != nil && !visible(d.source) {
					continue
				}
				hits = append(hits, Hit{Source: d.source, Heading: d.heading, Date: d.date, Text: d.text, Score: scores[id]})
			}
			return nil
		})
		if err != nil || len(hits) == limit || visible == nil || want >= len(scores) {
			return hits, err
		}
	}
}

// keywordTop scores entries by BM25 over the query's distinct terms and
// returns the best k ids, best first, with every scored entry's score.
func (x *Index) keywordTop(text string, k int) ([]uint64, map[uint64]float64, error) {
	var terms []string
	seen := make(map[string]bool)
	tokenize(text, func(t string) {
		if !seen[t] && len(terms) < maxQueryTerms {
			seen[t] = true
			terms = append(terms, t)
		}
	})
	scores := make(map[uint64]float64)
	err := x.o.DB.View(func(tx *storage.Tx) error {
		var n, total uint64
		for _, m := range []struct {
			key []byte
			dst *uint64
		}{{metaN, &n}, {metaLen, &total}} {
			v, err := tx.IndexGet(x.scope, kindMeta, m.key)
			if err != nil {
				return err
			}
			*m.dst = uvarintOf(v)
		}
		if n == 0 {
			return nil
		}
		avg := max(float64(total)/float64(n), 1)
		type posting struct {
			id      uint64
			tf, len float64
		}
		var ps []posting
		for _, t := range terms {
			ps = ps[:0]
			prefix := append([]byte(t), 0)
			if err := tx.IndexScan(x.scope, kindPost, prefix, func(key, v []byte) error {
				if len(key) != len(prefix)+8 {
					return nil
				}
				tf, a := binary.Uvarint(v)
				dl, b := binary.Uvarint(v[max(a, 0):])
				if a <= 0 || b <= 0 {
					return nil
				}
				ps = append(ps, posting{binary.BigEndian.Uint64(key[len(prefix):]), float64(tf), float64(dl)})
				return nil
			}); err != nil {
				return err
			}
			df := float64(len(ps))
			idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
			for _, p := range ps {
				scores[p.id] += idf * p.tf * (bm25K1 + 1) / (p.tf + bm25K1*(1-bm25B+bm25B*p.len/avg))
			}
		}
		return nil
	})
	top := newTopK(k)
	for id, s := range scores {
		top.push(id, s)
	}
	return top.ids(), scores, err
}

// topK keeps the k best (id, score) pairs: a min-heap on score, ties
// broken towards the newer (higher) id.
type topK struct {
	k     int
	items []scored
}

type scored struct {
	id    uint64
	score float64
}

func newTopK(k int) *topK { return &topK{k: k} }

func (t *topK) Len() int { return len(t.items) }
func (t *topK) Less(i, j int) bool {
	a, b := t.items[i], t.items[j]
	return a.score < b.score || (a.score == b.score && a.id < b.id)
}
func (t *topK) Swap(i, j int) { t.items[i], t.items[j] = t.items[j], t.items[i] }
func (t *topK) Push(x any)    { t.items = append(t.items, x.(scored)) }
func (t *topK) Pop() any {
	x := t.items[len(t.items)-1]
	t.items = t.items[:len(t.items)-1]
	return x
}

func (t *topK) push(id uint64, score float64) {
	s := scored{id, score}
	if len(t.items) < t.k {
		heap.Push(t, s)
		return
	}
	if t.k > 0 && (s.score > t.items[0].score || (s.score == t.items[0].score && s.id > t.items[0].id)) {
		t.items[0] = s
		heap.Fix(t, 0)
	}
}

// ids returns the kept ids, best first.
func (t *topK) ids() []uint64 {
	sort.Slice(t.items, func(i, j int) bool { return !t.Less(i, j) })
	out := make([]uint64, len(t.items))
	for i, s := range t.items {
		out[i] = s.id
	}
	return out
}
