package memory

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokenize(t *testing.T) {
	var got []string
	tokenize("The Cats' meetings, MEETING and met: Größe naïve 東京 x_y 2026-11-20 "+strings.Repeat("a", 100), func(s string) {
		got = append(got, s)
	})
	assert.Equal(t, []string{"cat", "meet", "meet", "met", "größe", "naïve", "東京", "x", "y", "2026", "11", "20",
		strings.Repeat("a", maxTerm)}, got)
}

func TestChunkDaily(t *testing.T) {
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	got := chunkDaily(day, "# 2026-11-20\n\n## 09:15\nfirst\n\n## not a time\nsecond\n## 25:00\n"+
		strings.Repeat("word ", 400)+"\n\n"+strings.Repeat("more ", 400))
	require.Len(t, got, 6)
	assert.Equal(t, chunk{heading: "## 09:15", text: "first", date: day.Add(9*time.Hour + 15*time.Minute)}, got[0])
	assert.Equal(t, chunk{heading: "## not a time", text: "second", date: day}, got[1])
	assert.Equal(t, "## 25:00", got[2].heading)
	for _, c := range got[2:] {
		assert.Equal(t, "## 25:00", c.heading, "a long entry is cut into several, same heading")
		assert.LessOrEqual(t, len(c.text), maxChunk)
		for _, w := range strings.Fields(c.text) {
			assert.Contains(t, []string{"word", "more"}, w, "cut between words")
		}
	}
}

func TestChunkDoc(t *testing.T) {
	mt := time.Unix(1e9, 0)
	got := chunkDoc(mt, "intro\n# A\npara a\n\n### B\n#hashtag is text\n\n## Empty\n")
	assert.Equal(t, []chunk{
		{text: "intro", date: mt},
		{heading: "# A", text: "para a", date: mt},
		{heading: "### B", text: "#hashtag is text", date: mt},
		{heading: "## Empty", text: "## Empty", date: mt},
	}, got)
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "Hello, World!", "größe 東京 naïve", "\xff\xfe", "a\u0301b", strings.Repeat("ü", 60)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tokenize(s, func(term string) {
			if term == "" || len(term) > maxTerm || strings.ContainsRune(term, 0) {
				t.Fatalf("bad term %q", term)
			}
		})
	})
}

func FuzzChunk(f *testing.F) {
	for _, s := range []string{"", "# 2026-01-01\n\n## 10:00\nhi\n", "#\n##\n## \n", strings.Repeat("x", 4000),
		"## 09:00\n" + strings.Repeat("é", 2000), "a\n\n\n\nb\r\n## 1:2\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, cs := range [][]chunk{chunkDaily(day, s), chunkDoc(day, s)} {
			for _, c := range cs {
				if len(c.text) > maxChunk || c.text == "" {
					t.Fatalf("chunk of %d bytes", len(c.text))
				}
				if utf8.ValidString(s) && !utf8.ValidString(c.text) {
					t.Fatalf("valid input cut inside a rune: %q", c.text)
				}
			}
		}
		if cut(s, 10) != s && len(cut(s, 10)) > 10 {
			t.Fatal("cut too long")
		}
	})
}

// Records come back from the file; damage must not panic.
func FuzzDecodeRecords(f *testing.F) {
	d := docRec{source: "memory/MEMORY.md", heading: "# A", date: time.Unix(5, 0), length: 3, text: "hi", terms: map[string]int{"hi": 1}}
	fr := fileRec{size: 10, mtime: 5, hash: "h", ids: []uint64{1, 2}}
	f.Add(d.encode())
	f.Add(fr.encode())
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeDoc(b, true)
		_, _ = decodeFile(b)
		_ = uvarintOf(b)
	})
}

func TestRecords_RoundTrip(t *testing.T) {
	d := docRec{source: "session x", heading: "user", date: time.Unix(0, 12345), length: 2, text: "a b", terms: map[string]int{"a": 1, "b": 1}}
	got, err := decodeDoc(d.encode(), true)
	require.NoError(t, err)
	assert.Equal(t, d.terms, got.terms)
	assert.True(t, d.date.Equal(got.date))
	fr := fileRec{size: 1 << 40, mtime: -5, hash: "0123456789abcdef", ids: []uint64{1, 1 << 60}}
	gf, err := decodeFile(fr.encode())
	require.NoError(t, err)
	assert.Equal(t, fr, gf)
	_, err = decodeDoc(d.encode()[:5], true)
	assert.ErrorIs(t, err, errBadRecord)
}

func TestQuantize(t *testing.T) {
	a := []float32{0.3, -1.2, 4.5, 0, 2}
	b := []float32{0.1, -1, 4, 0.5, 2.2}
	q := quantize(b)
	assert.Len(t, q, 4+len(b))
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	exact := dot / (sqrt(na) * sqrt(nb))
	assert.InDelta(t, exact, cosine(quantize(a), q), 0.01)
	assert.Equal(t, -2.0, cosine(quantize(a), quantize([]float32{1, 2})), "another dimension")
	assert.Equal(t, -2.0, cosine(quantize(a), quantize(make([]float32, 5))), "zero vector")
	assert.Nil(t, normalize(make([]float32, 3)))
}

func sqrt(x float64) float64 {
	z := x
	for range 50 {
		z = (z + x/z) / 2
	}
	return z
}
