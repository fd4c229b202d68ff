package agents

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestList(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, withSpec bool) {
		dir := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		if withSpec {
			require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), []byte("not: parsed: [\n"), 0o644))
		}
	}
	mk("zeta", true)
	mk("alpha", true)
	mk("no-spec", false)
	mk(".hidden", true)
	require.NoError(t, os.WriteFile(filepath.Join(root, "README.md"), nil, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dir-spec", FileName), 0o755)) // agent.yaml is a folder
	require.NoError(t, os.Symlink(filepath.Join(root, "alpha"), filepath.Join(root, "linked")))
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, os.Chtimes(filepath.Join(root, "zeta", FileName), old, old))

	got, err := List(root)
	require.NoError(t, err)
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
		assert.Equal(t, filepath.Join(root, e.Name), e.Dir)
	}
	assert.Equal(t, []string{"alpha", "linked", "zeta"}, names)
	assert.True(t, got[2].ModTime.Equal(old))
}

func TestList_MissingDir(t *testing.T) {
	got, err := List(filepath.Join(t.TempDir(), "nope"))
	assert.NoError(t, err)
	assert.Empty(t, got)
}

// BenchmarkList measures what serve pays at start for 100 agents.
func BenchmarkList(b *testing.B) {
	root := b.TempDir()
	for i := range 100 {
		dir := filepath.Join(root, "agent-"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		require.NoError(b, os.MkdirAll(dir, 0o755))
		require.NoError(b, os.WriteFile(filepath.Join(dir, FileName), []byte("x: 1\n"), 0o644))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := List(root); err != nil {
			b.Fatal(err)
		}
	}
}
