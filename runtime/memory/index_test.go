package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// testDB stands in for the loop: the index's reads and commits go to a
// real store, the sessions' logs come from memory.
type testDB struct {
	st      *storage.Store
	mu      sync.Mutex
	sess    []runtime.SessionInfo
	events  map[string][]runtime.Event
	commits int
	reads   int // events read
	shared  *Shared
}

func openTestDB(t testing.TB, path string) *testDB {
	st, err := storage.Open(path, &storage.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return &testDB{st: st, events: make(map[string][]runtime.Event), shared: NewShared()}
}

func (d *testDB) View(fn func(*storage.Tx) error) error { return d.st.View(fn) }

func (d *testDB) Commit(_ context.Context, fn func(*storage.Tx) error) error {
	d.commits++
	return d.st.Update(fn)
}

func (d *testDB) SessionIDs(context.Context) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var ids []string
	for _, s := range d.sess {
		ids = append(ids, s.ID)
	}
	return ids, nil
}

func (d *testDB) Session(_ context.Context, id string) (runtime.SessionInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.sess {
		if s.ID == id {
			return s, nil
		}
	}
	return runtime.SessionInfo{}, runtime.ErrSessionNotFound
}

func (d *testDB) Events(_ context.Context, sid string, after uint64, fn func(runtime.Event) error) error {
	d.mu.Lock()
	evs, ok := d.events[sid]
	d.mu.Unlock()
	if !ok {
		return runtime.ErrSessionNotFound
	}
	for _, e := range evs {
		if e.Seq <= after {
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
		d.reads++
	}
	return nil
}

// say appends messages to a session (created on first use).
func (d *testDB) say(sid, agent string, texts ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	evs := d.events[sid]
	for _, s := range texts {
		typ := runtime.EvUserMessage
		if len(evs)%2 == 1 {
			typ = runtime.EvAssistant
		}
		evs = append(evs, runtime.Event{Seq: uint64(len(evs) + 1), Type: typ, Content: s,
			Time: time.Date(2026, 11, 1, 9, 0, len(evs), 0, time.UTC)})
	}
	d.events[sid] = evs
	i := slices.IndexFunc(d.sess, func(s runtime.SessionInfo) bool { return s.ID == sid })
	if i < 0 {
		d.sess = append(d.sess, runtime.SessionInfo{ID: sid, Agent: agent})
		i = len(d.sess) - 1
	}
	d.sess[i].LastSeq = uint64(len(evs))
}

func (d *testDB) forget(sid string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.events, sid)
	d.sess = slices.DeleteFunc(d.sess, func(s runtime.SessionInfo) bool { return s.ID == sid })
}

// bank is an agent's folder with memory files and a world folder.
type bank struct {
	t          *testing.T
	mem, world string
}

func newFiles(t *testing.T) bank {
	dir := t.TempDir()
	b := bank{t: t, mem: filepath.Join(dir, "agent", "memory"), world: filepath.Join(dir, "world")}
	require.NoError(t, os.MkdirAll(filepath.Join(b.mem, "daily"), 0o755))
	require.NoError(t, os.MkdirAll(b.world, 0o755))
	return b
}

func (b bank) write(rel, content string) {
	p := filepath.Join(b.mem, rel)
	if r, ok := cutPrefix(rel, "world/"); ok {
		p = filepath.Join(b.world, r)
	}
	require.NoError(b.t, os.WriteFile(p, []byte(content), 0o644))
	// A new mtime even on a coarse clock, as a later edit would have.
	future := time.Now().Add(time.Duration(len(content)) * time.Millisecond)
	require.NoError(b.t, os.Chtimes(p, future, future))
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

func newTestIndex(t *testing.T, b bank, db *testDB, e Embedder) *Index {
	return NewIndex(IndexOptions{Agent: "ada", MemoryDir: b.mem, WorldDir: b.world, DB: db, Embedder: e, Shared: db.shared})
}

func search(t *testing.T, x *Index, q string) Results {
	t.Helper()
	res, err := x.Search(context.Background(), Query{Text: q})
	require.NoError(t, err)
	return res
}

func sources(r Results) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Source+" "+h.Heading)
	}
	return out
}

// corpus is a fixed memory bank whose rankings the tests pin.
func corpus(b bank) {
	b.write("MEMORY.md", "# Facts\n\nThe user's cat is called Miso.\n\n## Work\n\nThe user works on a Go project named agnx-lite.\n")
	b.write("daily/2026-11-20.md", "# 2026-11-20\n\n## 09:15\nMet Ana about the garden; she wants tomatoes and basil.\n\n"+
		"## 14:05\nThe Raspberry Pi runs hot: ordered a fan.\n")
	b.write("daily/2026-11-21.md", "# 2026-11-21\n\n## 08:00\nTomatoes planted in the garden, basil next week.\n")
	b.write("world/cats.md", "# Cats\n\nCats sleep most of the day. Miso prefers the windowsill.\n")
}

func TestIndex_KeywordRanking(t *testing.T) {
	b := newFiles(t)
	corpus(b)
	db := openTestDB(t, filepath.Join(t.TempDir(), "agnx.db"))
	db.say("s1", "ada", "what should I plant in the garden?", "Tomatoes do well in the garden in spring.")
	db.say("s2", "bob", "garden garden garden tomatoes") // another agent's: never found
	x := newTestIndex(t, b, db, nil)

	res := search(t, x, "tomatoes garden")
	assert.Equal(t, "keyword", res.Mode)
	assert.Empty(t, res.Note)
	assert.Equal(t, []string{
		"session s1 assistant", // both terms, the shortest entry
		"memory/daily/2026-11-21.md ## 08:00",
		"memory/daily/2026-11-20.md ## 09:15", // both terms, a longer entry
		"session s1 user",                     // garden only
	}, sources(res))
	assert.Equal(t, "Tomatoes do well in the garden in spring.", res.Hits[0].Text)
	assert.Equal(t, time.Date(2026, 11, 1, 9, 0, 1, 0, time.UTC), res.Hits[0].Date.UTC())
	daily := res.Hits[1]
	assert.Equal(t, "Tomatoes planted in the garden, basil next week.", daily.Text)
	assert.Equal(t, time.Date(2026, 11, 21, 8, 0, 0, 0, time.Local), daily.Date)
	for i := 1; i < len(res.Hits); i++ {
		assert.Greater(t, res.Hits[i-1].Score, res.Hits[i].Score)
	}

	res = search(t, x, "Miso")
	assert.ElementsMatch(t, []string{"memory/MEMORY.md # Facts", "world/cats.md # Cats"}, sources(res))
	// Case and plurals: "FANS" finds "fan".
	assert.Equal(t, []string{"memory/daily/2026-11-20.md ## 14:05"}, sources(search(t, x, "FANS raspberry")))
	assert.Empty(t, search(t, x, "the and of").Hits, "stop words only")
	assert.Empty(t, search(t, x, "   ").Hits)

	res, err := x.Search(context.Background(), Query{Text: "garden", Limit: 1})
	require.NoError(t, err)
	assert.Len(t, res.Hits, 1)
}

func TestIndex_Incremental(t *testing.T) {
	b := newFiles(t)
	corpus(b)
	db := openTestDB(t, filepath.Join(t.TempDir(), "agnx.db"))
	x := newTestIndex(t, b, db, nil)
	search(t, x, "garden")
	before := fileRecs(t, x, db)
	require.Len(t, before, 4)

	// Nothing changed: nothing is written.
	db.commits = 0
	search(t, x, "garden")
	assert.Zero(t, db.commits, "no change, no commit")

	// A person edits one daily file: only it is re-chunked, and the edit
	// is found while what it replaced is gone.
	b.write("daily/2026-11-21.md", "# 2026-11-21\n\n## 08:00\nCucumbers planted instead.\n")
	res := search(t, x, "cucumbers")
	require.Len(t, res.Hits, 1)
	assert.Equal(t, "memory/daily/2026-11-21.md", res.Hits[0].Source)
	after := fileRecs(t, x, db)
	for src, rec := range before {
		if src == "memory/daily/2026-11-21.md" {
			assert.NotEqual(t, rec.ids, after[src].ids, "re-indexed")
		} else {
			assert.Equal(t, rec.ids, after[src].ids, "%s untouched", src)
		}
	}
	for _, h := range search(t, x, "planted").Hits {
		assert.NotContains(t, h.Text, "Tomatoes planted")
	}

	// Same bytes, new mtime: the hash says nothing changed.
	b.write("world/cats.md", "# Cats\n\nCats sleep most of the day. Miso prefers the windowsill.\n")
	search(t, x, "x")
	assert.Equal(t, before["world/cats.md"].ids, fileRecs(t, x, db)["world/cats.md"].ids)

	// A deleted file's entries go.
	require.NoError(t, os.Remove(filepath.Join(b.world, "cats.md")))
	assert.Equal(t, []string{"memory/MEMORY.md # Facts"}, sources(search(t, x, "miso")))
	assert.NotContains(t, fileRecs(t, x, db), "world/cats.md")
	assert.Equal(t, uint64(5), counter(t, x, db, metaN), "MEMORY.md 2 + 2026-11-20 2 + 2026-11-21 1")

	// New messages of a session are picked up, and only the new events read.
	db.say("s1", "ada", "the sourdough starter needs feeding")
	assert.Equal(t, []string{"session s1 user"}, sources(search(t, x, "sourdough")))
	db.reads = 0
	db.say("s1", "ada", "sourdough bread came out well")
	assert.Len(t, search(t, x, "sourdough").Hits, 2)
	assert.Equal(t, 1, db.reads, "only the new event is read")

	// A deleted session's entries go.
	db.forget("s1")
	assert.Empty(t, search(t, x, "sourdough").Hits)
}

func TestIndex_EventsBoundedPerSearch(t *testing.T) {
	b := newFiles(t)
	db := openTestDB(t, filepath.Join(t.TempDir(), "agnx.db"))
	msgs := make([]string, maxEvents+10)
	for i := range msgs {
		msgs[i] = "filler words"
	}
	msgs[len(msgs)-1] = "zebra at the very end"
	db.say("s1", "ada", msgs...)
	x := newTestIndex(t, b, db, nil)
	assert.Empty(t, search(t, x, "zebra").Hits, "past the first call's budget")
	assert.Equal(t, maxEvents, db.reads)
	assert.Len(t, search(t, x, "zebra").Hits, 1, "the next call goes on")
	assert.Equal(t, maxEvents+10, db.reads)
}

func TestIndex_PersistsAcrossRestart(t *testing.T) {
	b := newFiles(t)
	corpus(b)
	path := filepath.Join(t.TempDir(), "agnx.db")
	db := openTestDB(t, path)
	db.say("s1", "ada", "remember the blue notebook")
	search(t, newTestIndex(t, b, db, nil), "notebook")
	n := counter(t, nil, db, metaNext)
	require.NoError(t, db.st.Close())

	db2 := openTestDB(t, path)
	db2.sess, db2.events = db.sess, db.events
	x := newTestIndex(t, b, db2, nil)
	res := search(t, x, "blue notebook")
	require.Len(t, res.Hits, 1)
	assert.Equal(t, "session s1", res.Hits[0].Source)
	assert.Zero(t, db2.reads, "nothing re-read after the restart")
	assert.Zero(t, db2.commits, "nothing rebuilt")
	assert.Equal(t, n, counter(t, x, db2, metaNext))
}

func TestIndex_HostileFiles(t *testing.T) {
	b := newFiles(t)
	b.write("MEMORY.md", "# Big\n\n"+string(make([]byte, 0))+repeat("alpha beta gamma\n", maxFileRead/17+100))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(b.mem, "daily", "2026-01-01.md")))
	require.NoError(t, mkfifo(filepath.Join(b.mem, "daily", "2026-01-02.md")))
	b.write("daily/notes.txt", "ignored: not a daily name")
	b.write("world/.hidden.md", "hidden")
	db := openTestDB(t, filepath.Join(t.TempDir(), "agnx.db"))
	x := newTestIndex(t, b, db, nil)
	res := search(t, x, "root alpha ignored hidden")
	for _, h := range res.Hits {
		assert.Equal(t, "memory/MEMORY.md", h.Source)
		assert.LessOrEqual(t, len(h.Text), maxText)
	}
	assert.NotEmpty(t, res.Hits)
	assert.Equal(t, []string{"memory/MEMORY.md"}, keys(fileRecs(t, x, db)))

	// Missing folders are no error.
	x = NewIndex(IndexOptions{Agent: "new", MemoryDir: filepath.Join(b.mem, "nope"), DB: db})
	assert.Empty(t, search(t, x, "alpha").Hits)
}

func TestIndex_CommitFails(t *testing.T) {
	b := newFiles(t)
	corpus(b)
	db := &failingDB{openTestDB(t, filepath.Join(t.TempDir(), "agnx.db"))}
	x := NewIndex(IndexOptions{Agent: "ada", MemoryDir: b.mem, DB: db})
	_, err := x.Search(context.Background(), Query{Text: "garden"})
	require.ErrorContains(t, err, "update the memory index of ada: disk full")
}

type failingDB struct{ *testDB }

func (failingDB) Commit(context.Context, func(*storage.Tx) error) error {
	return errors.New("disk full")
}

func fileRecs(t *testing.T, x *Index, db *testDB) map[string]fileRec {
	out := make(map[string]fileRec)
	require.NoError(t, db.View(func(tx *storage.Tx) error {
		return tx.IndexScan("mem/ada", kindFile, nil, func(k, v []byte) error {
			f, err := decodeFile(v)
			out[string(k)] = f
			return err
		})
	}))
	return out
}

func counter(t *testing.T, _ *Index, db *testDB, key []byte) uint64 {
	var n uint64
	require.NoError(t, db.View(func(tx *storage.Tx) error {
		v, err := tx.IndexGet("mem/ada", kindMeta, key)
		n = uvarintOf(v)
		return err
	}))
	return n
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func repeat(s string, n int) string {
	out := make([]byte, 0, len(s)*n)
	for range n {
		out = append(out, s...)
	}
	return string(out)
}

// Two Index values of one agent searching while files change: never two
// syncs at once, so the counters match the entries.
func TestIndex_ConcurrentSearches(t *testing.T) {
	b := newFiles(t)
	corpus(b)
	db := openTestDB(t, filepath.Join(t.TempDir(), "agnx.db"))
	xs := []*Index{newTestIndex(t, b, db, nil), newTestIndex(t, b, db, nil)}
	var wg sync.WaitGroup
	for i, x := range xs {
		wg.Go(func() {
			for j := range 20 {
				_, err := x.Search(context.Background(), Query{Text: "garden"})
				assert.NoError(t, err)
				if i == 0 {
					b.write("daily/2026-11-22.md", fmt.Sprintf("# 2026-11-22\n\n## 10:%02d\nentry %d\n", j, j))
				}
			}
		})
	}
	wg.Wait()
	search(t, xs[0], "entry")
	assert.Equal(t, uint64(count(t, db, kindDoc)), counter(t, nil, db, metaN))
}

// The store adapter the CLI uses reads real sessions.
func TestStoreDB(t *testing.T) {
	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	defer st.Close()
	x := NewIndex(IndexOptions{Agent: "solo", DB: StoreDB(st)})
	res, err := x.Search(context.Background(), Query{Text: "anything"})
	require.NoError(t, err)
	assert.Empty(t, res.Hits)
}
