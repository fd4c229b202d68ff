package memory

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
)

// conceptEmbedder is a deterministic fake for the fusion maths: a text's
// vector counts its words of three concepts (pets, plants, hardware).
type conceptEmbedder struct {
	mu    sync.Mutex
	model string
	fail  bool // every call fails
	texts int  // texts embedded
}

var concepts = [][]string{
	{"cat", "cats", "miso", "kitten", "pet", "pets"},
	{"garden", "tomatoes", "basil", "vegetables", "plant", "planted"},
	{"raspberry", "pi", "fan", "hot", "hardware"},
}

func (e *conceptEmbedder) Model() string { return e.model }

func (e *conceptEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fail {
		return nil, errors.New("ollama embeddings at http://x/api/embed: connection refused")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := []float32{0.01, 0.01, 0.01}
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return r < 'a' || r > 'z' }) {
			for c, words := range concepts {
				for _, x := range words {
					if w == x {
						v[c]++
					}
				}
			}
		}
		out[i] = v
	}
	e.texts += len(texts)
	return out, nil
}

func TestIndex_Hybrid(t *testing.T) {
	b := newFiles(t)
	corpus(b)
	db := openTestDB(t, filepath.Join(t.TempDir(), "agnx.db"))
	e := &conceptEmbedder{model: "fake/concepts"}
	x := newTestIndex(t, b, db, e)

	// "vegetables" is in no entry: keyword finds nothing, vectors find
	// the garden entries.
	res := search(t, x, "vegetables")
	assert.Equal(t, "hybrid", res.Mode)
	assert.Empty(t, res.Note)
	require.NotEmpty(t, res.Hits)
	assert.Contains(t, []string{"memory/daily/2026-11-20.md", "memory/daily/2026-11-21.md"}, res.Hits[0].Source)

	// The fused score is reciprocal rank fusion of the two rankings.
	q := "miso the cat"
	kw, _, err := x.keywordTop(q, 50)
	require.NoError(t, err)
	qv, err := e.Embed(context.Background(), []string{q})
	require.NoError(t, err)
	vec, err := x.vectorTop(normalize(qv[0]), 50)
	require.NoError(t, err)
	want := fuse(kw, vec)
	res = search(t, x, q)
	require.NotEmpty(t, res.Hits)
	idOf := docIDs(t, db)
	for i, h := range res.Hits {
		id := idOf[h.Source+"|"+h.Text]
		assert.InDelta(t, want[id], h.Score, 1e-12, h.Source)
		if i > 0 {
			assert.GreaterOrEqual(t, res.Hits[i-1].Score, h.Score)
		}
	}
	require.GreaterOrEqual(t, len(res.Hits), 2)
	assert.ElementsMatch(t, []string{"memory/MEMORY.md", "world/cats.md"}, []string{res.Hits[0].Source, res.Hits[1].Source},
		"first and second in both rankings")
	assert.InDelta(t, 1.0/61+1.0/62, res.Hits[0].Score, 1e-12)

	// The query's embedding fails: keyword results, with a note.
	e.fail = true
	res = search(t, x, "miso")
	assert.Equal(t, "keyword", res.Mode)
	assert.Contains(t, res.Note, "embeddings endpoint failed")
	assert.Contains(t, res.Note, "connection refused")
	assert.Len(t, res.Hits, 2)
}

func TestIndex_VectorsCatchUp(t *testing.T) {
	b := newFiles(t)
	corpus(b)
	db := openTestDB(t, filepath.Join(t.TempDir(), "agnx.db"))
	e := &conceptEmbedder{model: "fake/v1", fail: true}
	x := newTestIndex(t, b, db, e)
	search(t, x, "garden")
	assert.Equal(t, 0, count(t, db, kindVec), "embedding failed")
	assert.Equal(t, 6, count(t, db, kindNoVec), "all queued")

	e.fail = false
	search(t, x, "garden")
	assert.Equal(t, 6, count(t, db, kindVec), "a later sync fills them")
	assert.Zero(t, count(t, db, kindNoVec))
	e.texts = 0
	search(t, x, "garden")
	assert.Equal(t, 1, e.texts, "only the query is embedded")

	// Another model: every vector is recomputed.
	e.model = "fake/v2"
	search(t, x, "garden")
	assert.Equal(t, 1+6+1, e.texts)
	assert.Equal(t, 6, count(t, db, kindVec))

	// Without an embedder: keyword only, no note, no error.
	x = newTestIndex(t, b, db, nil)
	res := search(t, x, "garden")
	assert.Equal(t, "keyword", res.Mode)
	assert.Empty(t, res.Note)
	assert.NotEmpty(t, res.Hits)
}

func count(t *testing.T, db *testDB, kind string) int {
	n := 0
	require.NoError(t, db.View(func(tx *storage.Tx) error {
		return tx.IndexScan("mem/ada", kind, nil, func(k, v []byte) error { n++; return nil })
	}))
	return n
}

// docIDs maps "source|text" to each entry's id.
func docIDs(t *testing.T, db *testDB) map[string]uint64 {
	out := make(map[string]uint64)
	require.NoError(t, db.View(func(tx *storage.Tx) error {
		return tx.IndexScan("mem/ada", kindDoc, nil, func(k, v []byte) error {
			d, err := decodeDoc(v, false)
			out[d.source+"|"+d.text] = uvarintBE(k)
			return err
		})
	}))
	return out
}

func uvarintBE(k []byte) uint64 {
	var n uint64
	for _, b := range k {
		n = n<<8 | uint64(b)
	}
	return n
}
