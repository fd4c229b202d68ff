package memory

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
)

// hashEmbedder is a local stand-in for an embedding model in benchmarks:
// each word adds one to a dimension picked by its hash, 768 dimensions as
// nomic-embed-text has.
type hashEmbedder struct{}

func (hashEmbedder) Model() string { return "bench/hash768" }

func (hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 768)
		for _, w := range strings.Fields(t) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%768]++
		}
		out[i] = v
	}
	return out, nil
}

// benchBank writes 10,000 entries: 100 daily files of 100 entries of 30
// words drawn from a Zipf-distributed vocabulary of 5,000 words.
func benchBank(b *testing.B, dir string) {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 1, 4999)
	require.NoError(b, os.MkdirAll(filepath.Join(dir, "daily"), 0o755))
	for d := range 100 {
		var sb strings.Builder
		day := fmt.Sprintf("2026-%02d-%02d", 1+d/28, 1+d%28)
		sb.WriteString("# " + day + "\n\n")
		for e := range 100 {
			fmt.Fprintf(&sb, "## %02d:%02d\n", e/60, e%60)
			for range 30 {
				fmt.Fprintf(&sb, "w%d ", z.Uint64())
			}
			sb.WriteString("\n\n")
		}
		require.NoError(b, os.WriteFile(filepath.Join(dir, "daily", day+".md"), []byte(sb.String()), 0o644))
	}
}

// BenchmarkRecall10k is the latency of one recall over 10,000 indexed
// entries: the per-search check that nothing changed, then the ranking.
func BenchmarkRecall10k(b *testing.B) {
	dir := b.TempDir()
	benchBank(b, filepath.Join(dir, "memory"))
	for _, mode := range []string{"keyword", "hybrid"} {
		b.Run(mode, func(b *testing.B) {
			db := openTestDB(b, filepath.Join(b.TempDir(), "agnx.db"))
			var e Embedder
			if mode == "hybrid" {
				e = hashEmbedder{}
			}
			x := NewIndex(IndexOptions{Agent: "ada", MemoryDir: filepath.Join(dir, "memory"), DB: db, Embedder: e})
			ctx := context.Background()
			for { // index once, vectors included
				_, err := x.Search(ctx, Query{Text: "w1"})
				require.NoError(b, err)
				if mode == "keyword" || countB(b, db, kindNoVec) == 0 {
					break
				}
			}
			res, err := x.Search(ctx, Query{Text: "w3 w17 w250"})
			require.NoError(b, err)
			require.Equal(b, mode, res.Mode)
			require.NotEmpty(b, res.Hits)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				q := fmt.Sprintf("w%d w%d w%d", 2+i%50, 60+i%400, 500+i%3000)
				if _, err := x.Search(ctx, Query{Text: q}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func countB(b *testing.B, db *testDB, kind string) int {
	n := 0
	require.NoError(b, db.View(func(tx *storage.Tx) error {
		return tx.IndexScan("mem/ada", kind, nil, func(k, v []byte) error { n++; return nil })
	}))
	return n
}
