package memory

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
)

// fixed is a clock at 2026-11-20 14:05 local time.
func fixed() time.Time { return time.Date(2026, 11, 20, 14, 5, 0, 0, time.Local) }

func newBank(t *testing.T) (*Bank, string, string) {
	t.Helper()
	agent, world := t.TempDir(), filepath.Join(t.TempDir(), "world")
	return NewBank(BankOptions{AgentDir: agent, WorldDir: world, Now: fixed}), agent, world
}

func TestBank_RememberRestartRecall(t *testing.T) {
	b, agent, world := newBank(t)
	p, err := b.Remember("The user likes oat milk.")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(agent, "memory", "daily", "2026-11-20.md"), p)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "# 2026-11-20\n\n## 14:05\n\nThe user likes oat milk.\n", string(data))

	// A new bank on the same folders (a restart) finds it.
	b2 := NewBank(BankOptions{AgentDir: agent, WorldDir: world, Now: fixed})
	r, err := b2.Recall(DefaultDays)
	require.NoError(t, err)
	assert.Equal(t, "# Recent Experiences\n\n# 2026-11-20\n\n## 14:05\n\nThe user likes oat milk.\n", r.Text)
	assert.Equal(t, []string{p}, r.Paths)
}

func TestBank_RecallSectionsAndDays(t *testing.T) {
	b, agent, _ := newBank(t)
	_, err := b.WriteWorld("systems", "DB: PostgreSQL")
	require.NoError(t, err)
	_, err = b.WriteWorld("people", "Alice: engineer")
	require.NoError(t, err)
	_, err = b.WriteMemory("Prefers short answers.")
	require.NoError(t, err)
	_, err = b.Remember("today's entry")
	require.NoError(t, err)
	old := filepath.Join(agent, "memory", "daily", "2026-11-18.md")
	require.NoError(t, os.WriteFile(old, []byte("# 2026-11-18\n\ntwo days ago"), 0o644))

	r, err := b.Recall(2)
	require.NoError(t, err)
	assert.Equal(t, "# World Knowledge\n\n## people\n\nAlice: engineer\n\n## systems\n\nDB: PostgreSQL"+
		"\n\n---\n\n# Your Memory\n\nPrefers short answers."+
		"\n\n---\n\n# Recent Experiences\n\n# 2026-11-20\n\n## 14:05\n\ntoday's entry\n", r.Text)
	r, err = b.Recall(3)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(r.Text, "today's entry\n\n\n---\n\n# 2026-11-18\n\ntwo days ago"), r.Text)
}

func TestBank_Empty(t *testing.T) {
	b, _, _ := newBank(t)
	r, err := b.Recall(3)
	require.NoError(t, err)
	assert.Empty(t, r.Text)
	m, err := b.ReadMemory()
	require.NoError(t, err)
	assert.Empty(t, m)
}

// Two sessions remembering at once: every entry lands whole, the head is
// written once, and the file parses back into the entries.
func TestBank_ConcurrentRemembers(t *testing.T) {
	b, agent, world := newBank(t)
	other := NewBank(BankOptions{AgentDir: agent, WorldDir: world, Now: fixed}) // a second bank on the same files
	var wg sync.WaitGroup
	for g, bank := range []*Bank{b, other} {
		wg.Go(func() {
			for i := range 50 {
				_, err := bank.Remember(strings.Repeat("x", 100*g+i+1) + "\nline two " + string(rune('a'+g)))
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(b.DailyPath(fixed()))
	require.NoError(t, err)
	doc := string(data)
	require.True(t, strings.HasPrefix(doc, "# 2026-11-20\n"))
	assert.Equal(t, 1, strings.Count(doc, "# 2026-11-20"))
	secs := splitSections(doc, true)
	require.Len(t, secs, 101, "the head and 100 entries")
	for _, s := range secs[1:] {
		assert.Equal(t, "## 14:05", s.heading)
		lines := strings.Split(strings.Trim(s.body, "\n"), "\n")
		require.Len(t, lines, 2, "an entry is whole: %q", s.body)
		assert.True(t, strings.HasPrefix(lines[1], "line two "))
	}
}

// A person's edit of MEMORY.md is what the next read sees.
func TestBank_PersonsEditIsSeen(t *testing.T) {
	b, _, _ := newBank(t)
	_, err := b.WriteMemory("first")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(b.MemoryPath(), []byte("edited by hand"), 0o644))
	m, err := b.ReadMemory()
	require.NoError(t, err)
	assert.Equal(t, "edited by hand", m)
	r, err := b.Recall(1)
	require.NoError(t, err)
	assert.Contains(t, r.Text, "edited by hand")
}

func TestBank_WritesAreAtomicAndLeaveNoTemp(t *testing.T) {
	b, agent, world := newBank(t)
	for _, s := range []string{"one", "two"} {
		_, err := b.WriteMemory(s)
		require.NoError(t, err)
		_, err = b.WriteWorld("t", s)
		require.NoError(t, err)
	}
	for _, dir := range []string{filepath.Join(agent, "memory"), world} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			assert.False(t, strings.Contains(e.Name(), ".tmp-"), "a temporary file was left: %s", e.Name())
		}
	}
	m, err := b.ReadMemory()
	require.NoError(t, err)
	assert.Equal(t, "two", m)
}

// Hostile files: a FIFO, a symlink out of the folder, an oversized file
// and a folder are refused (or skipped by recall) without hanging.
func TestBank_HostileFiles(t *testing.T) {
	b, agent, world := newBank(t)
	mem := filepath.Join(agent, "memory")
	require.NoError(t, os.MkdirAll(filepath.Join(mem, "daily"), 0o755))
	require.NoError(t, syscall.Mkfifo(b.MemoryPath(), 0o644))
	outside := filepath.Join(t.TempDir(), "secret.md")
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o644))
	require.NoError(t, os.Symlink(outside, b.DailyPath(fixed())))
	require.NoError(t, os.WriteFile(b.DailyPath(fixed().AddDate(0, 0, -1)), make([]byte, MaxFileBytes+1), 0o644))
	require.NoError(t, os.MkdirAll(world, 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(world, "dir.md"), 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(world, "pipe.md"), 0o644))

	done := make(chan struct{})
	go func() {
		defer close(done)
		r, err := b.Recall(3)
		require.NoError(t, err)
		assert.NotContains(t, r.Text, "secret")
		assert.Contains(t, r.Text, "MEMORY.md is not a regular file")
		assert.Contains(t, r.Text, "leads outside its folder")
		assert.Contains(t, r.Text, "is larger than 1024 KiB")
		assert.Contains(t, r.Text, "pipe.md is not a regular file")
		assert.Contains(t, r.Text, "dir.md is not a regular file")

		_, err = b.ReadMemory()
		assert.ErrorContains(t, err, "is not a regular file")
		_, err = b.Remember("x")
		assert.ErrorContains(t, err, "leads outside its folder")
		_, err = b.WriteWorld("dir", "x")
		assert.ErrorContains(t, err, "is not a regular file")
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a hostile memory file made the bank hang")
	}
	data, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "secret", string(data), "nothing was written through the link")
}

// A memory folder that is a symlink out of the agent's folder is refused.
func TestBank_MemoryFolderLinkOut(t *testing.T) {
	b, agent, _ := newBank(t)
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(agent, "memory")))
	_, err := b.WriteMemory("x")
	assert.Error(t, err)
	_, err = b.Remember("x")
	assert.Error(t, err)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestBank_AppendRefusedPastTheCap(t *testing.T) {
	b, _, _ := newBank(t)
	_, err := b.Remember("x")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(b.DailyPath(fixed()), make([]byte, MaxFileBytes-10), 0o644))
	_, err = b.Remember("more than ten bytes")
	assert.ErrorContains(t, err, "is larger than 1024 KiB: trim it")
	_, err = b.Remember(strings.Repeat("y", MaxContentBytes+1))
	assert.ErrorContains(t, err, "content is larger than 64 KiB")
}

func TestBank_RecallIsCapped(t *testing.T) {
	agent, world := t.TempDir(), filepath.Join(t.TempDir(), "world")
	b := NewBank(BankOptions{AgentDir: agent, WorldDir: world, Now: fixed, World: WorldLimits{FileBytes: MaxContentBytes}})
	big := strings.Repeat("é", MaxContentBytes/2-1)
	for _, topic := range []string{"a", "b", "c"} {
		_, err := b.WriteWorld(topic, big)
		require.NoError(t, err)
	}
	_, err := b.WriteMemory("never reached")
	require.NoError(t, err)
	r, err := b.Recall(3)
	require.NoError(t, err)
	assert.True(t, r.Cut)
	assert.LessOrEqual(t, len(r.Text), MaxRecallBytes+200)
	assert.NotContains(t, r.Text, "never reached")
	assert.Contains(t, r.Text, "[Recall cut at 64 KiB")
}

func TestSanitizeTopic(t *testing.T) {
	for in, want := range map[string]string{
		"people": "people", "My Topic!": "my-topic-", "../x": "---x", "/etc/passwd": "-etc-passwd",
		"a/b\\c": "a-b-c", "café": "caf-", "UP_down-1": "up_down-1", "..": "--", ".hidden": "-hidden",
	} {
		got, err := SanitizeTopic(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "   ", strings.Repeat("a", 65)} {
		_, err := SanitizeTopic(bad)
		assert.Error(t, err, bad)
	}
}

// Whatever the topic, update_world writes inside the world folder.
func TestBank_WriteWorldStaysInside(t *testing.T) {
	b, _, world := newBank(t)
	for _, topic := range []string{"../x", "/etc/passwd", "..", "a/../../b"} {
		p, err := b.WriteWorld(topic, "c")
		require.NoError(t, err, topic)
		assert.Equal(t, world, filepath.Dir(p), topic)
	}
	_, err := b.WriteWorld("", "c")
	assert.ErrorContains(t, err, "topic is empty")
	nb := NewBank(BankOptions{AgentDir: t.TempDir()})
	_, err = nb.WriteWorld("x", "c")
	assert.ErrorContains(t, err, "world memory is not set up")
}

// What the bank writes, the index finds: ranked, each hit citing its
// file and the entry's date.
func TestBank_WritesAreSearchable(t *testing.T) {
	b, agent, _ := newBank(t)
	_, err := b.WriteMemory("# Notes\n\n## Food\n\nLikes Oat milk.\n\n## Work\n\nWrites Go.\n")
	require.NoError(t, err)
	_, err = b.Remember("Bought oat milk again.")
	require.NoError(t, err)
	_, err = b.WriteWorld("shops", "The corner shop sells oat milk.")
	require.NoError(t, err)
	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	defer st.Close()
	x := NewIndex(IndexOptions{Agent: "a", MemoryDir: filepath.Join(agent, "memory"), WorldDir: b.WorldDir(), DB: StoreDB(st)})
	res, err := x.Search(context.Background(), Query{Text: "OAT MILK"})
	require.NoError(t, err)
	assert.Equal(t, "keyword", res.Mode)
	require.Len(t, res.Hits, 3)
	sources := map[string]Hit{}
	for _, h := range res.Hits {
		sources[h.Source] = h
	}
	require.Contains(t, sources, "memory/daily/2026-11-20.md")
	assert.Equal(t, "Bought oat milk again.", sources["memory/daily/2026-11-20.md"].Text)
	assert.True(t, sources["memory/daily/2026-11-20.md"].Date.Equal(fixed()), "the entry's time: %v", sources["memory/daily/2026-11-20.md"].Date)
	assert.Equal(t, "## Food", sources["memory/MEMORY.md"].Heading)
	assert.Contains(t, sources, "world/shops.md")

	res, err = x.Search(context.Background(), Query{Text: "oat", Limit: 1})
	require.NoError(t, err)
	assert.Len(t, res.Hits, 1)
}

// A daily file with another hard link (which may name a file outside
// the bank) is not appended to.
func TestBank_HardLinkedDailyRefused(t *testing.T) {
	b, agent, _ := newBank(t)
	_, err := b.Remember("x")
	require.NoError(t, err)
	other := filepath.Join(agent, "elsewhere.md")
	require.NoError(t, os.Link(b.DailyPath(fixed()), other))
	_, err = b.Remember("y")
	assert.ErrorContains(t, err, "has other hard links", "two links: refused after a few looks")
	require.NoError(t, os.Link(b.DailyPath(fixed()), other+"2"))
	_, err = b.Remember("y")
	assert.ErrorContains(t, err, "has other hard links")
	data, err := os.ReadFile(other)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "y")
}
