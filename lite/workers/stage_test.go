package workers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

// The copy takes regular files and folders; a symlink out of the
// workspace, one inside it and a FIFO are skipped and named, and the
// FIFO never blocks the copy.
func TestStage_SkipsSymlinksAndFIFOs(t *testing.T) {
	ws, dst := t.TempDir(), filepath.Join(t.TempDir(), "work")
	outside := filepath.Join(t.TempDir(), "secret")
	writeFile(t, filepath.Dir(outside), "secret", "top secret")
	writeFile(t, ws, "src/main.go", "package main\n")
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "leak")))
	require.NoError(t, os.Symlink(filepath.Dir(outside), filepath.Join(ws, "src", "leakdir")))
	require.NoError(t, os.Symlink("main.go", filepath.Join(ws, "src", "alias.go")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644))

	res, err := stage(context.Background(), ws, dst, Limits{}.withDefaults(), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"src/main.go"}, keys(res.base))
	assert.ElementsMatch(t, []string{"leak (symlink)", "pipe (fifo)", "src/alias.go (symlink)", "src/leakdir (symlink)"}, res.skipped)
	data, err := os.ReadFile(filepath.Join(dst, "src", "main.go"))
	require.NoError(t, err)
	assert.Equal(t, "package main\n", string(data))
	for _, name := range []string{"leak", "pipe", "src/leakdir", "src/alias.go"} {
		_, err := os.Lstat(filepath.Join(dst, name))
		assert.ErrorIs(t, err, os.ErrNotExist, name)
	}
	st, err := os.Stat(dst)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
}

func TestStage_Bounds(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, ws, "a", "1")
	writeFile(t, ws, "b", "2")
	writeFile(t, ws, "c", strings.Repeat("x", 3000))
	_, err := stage(context.Background(), ws, filepath.Join(t.TempDir(), "w"), Limits{MaxFiles: 2, MaxBytes: 1 << 20}, nil)
	assert.ErrorContains(t, err, "the workspace has over 2 files")
	_, err = stage(context.Background(), ws, filepath.Join(t.TempDir(), "w"), Limits{MaxFiles: 10, MaxBytes: 2048}, nil)
	assert.ErrorContains(t, err, "the workspace has over 0 MiB of files")
}

// The change set names added, changed and deleted files; the diff shows
// text files as unified hunks and names binary ones, and is cut at its
// bound with a marker that names the rest.
func TestRenderDiff(t *testing.T) {
	ws, dst := t.TempDir(), filepath.Join(t.TempDir(), "work")
	lines := make([]string, 40)
	for i := range lines {
		lines[i] = "line " + strings.Repeat("x", i%3) + "\n"
	}
	writeFile(t, ws, "long.txt", strings.Join(lines, ""))
	writeFile(t, ws, "gone.txt", "bye\n")
	writeFile(t, ws, "img.bin", "\x00\x01\x02")
	writeFile(t, ws, "same.txt", "same\n")
	res, err := stage(context.Background(), ws, dst, Limits{}.withDefaults(), nil)
	require.NoError(t, err)

	lines[5], lines[30] = "changed five\n", "changed thirty\n"
	writeFile(t, dst, "long.txt", strings.Join(lines, ""))
	require.NoError(t, os.Remove(filepath.Join(dst, "gone.txt")))
	writeFile(t, dst, "img.bin", "\x00\x01\x02\x03")
	writeFile(t, dst, "dir/new.txt", "fresh")
	require.NoError(t, syscall.Mkfifo(filepath.Join(dst, "fifo"), 0o644))

	cs, err := scan(context.Background(), dst, res.base, Limits{}.withDefaults())
	require.NoError(t, err)
	var got []string
	for _, c := range cs.changes {
		got = append(got, string(c.Kind)+" "+c.Path)
	}
	assert.Equal(t, []string{"added dir/new.txt", "deleted gone.txt", "changed img.bin", "changed long.txt"}, got)

	wsRoot, stRoot := openRoot(t, ws), openRoot(t, dst)
	diff := renderDiff(wsRoot, stRoot, cs, res.base, 64<<10)
	assert.Contains(t, diff, "--- /dev/null\n+++ b/dir/new.txt\n@@ -0,0 +1,1 @@\n+fresh\n\\ No newline at end of file\n")
	assert.Contains(t, diff, "deleted gone.txt (4 bytes)\n")
	assert.Contains(t, diff, "binary or large file img.bin changed (4 bytes)\n")
	assert.Contains(t, diff, "@@ -3,7 +3,7 @@\n line xx\n line \n line x\n-line xx\n+changed five\n")
	assert.Contains(t, diff, "@@ -28,7 +28,7 @@\n")
	assert.Contains(t, diff, "Not applied (symlinks and special files are never copied back): fifo (fifo)")
	assert.NotContains(t, diff, "same.txt")

	cut := renderDiff(wsRoot, stRoot, cs, res.base, 120)
	assert.LessOrEqual(t, len(cut), 120+300)
	assert.Contains(t, cut, "[diff cut at 0 KiB; ")
	assert.Contains(t, cut, "long.txt (changed)")
}

// Approve's apply writes new and changed files (keeping the executable
// bit) and removes deleted ones, confined to the workspace.
func TestApply(t *testing.T) {
	ws, dst := t.TempDir(), filepath.Join(t.TempDir(), "work")
	writeFile(t, ws, "a.txt", "a")
	writeFile(t, ws, "del.txt", "d")
	res, err := stage(context.Background(), ws, dst, Limits{}.withDefaults(), nil)
	require.NoError(t, err)
	writeFile(t, dst, "a.txt", "A")
	writeFile(t, dst, "deep/er/run.sh", "#!/bin/sh\n")
	require.NoError(t, os.Chmod(filepath.Join(dst, "deep/er/run.sh"), 0o755))
	require.NoError(t, os.Remove(filepath.Join(dst, "del.txt")))
	cs, err := scan(context.Background(), dst, res.base, Limits{}.withDefaults())
	require.NoError(t, err)
	wsRoot, stRoot := openRoot(t, ws), openRoot(t, dst)
	assert.Empty(t, conflicts(wsRoot, cs, res.base))
	require.NoError(t, apply(wsRoot, stRoot, cs))
	data, err := os.ReadFile(filepath.Join(ws, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "A", string(data))
	st, err := os.Stat(filepath.Join(ws, "deep/er/run.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o100), st.Mode().Perm()&0o100)
	assert.NoFileExists(t, filepath.Join(ws, "del.txt"))
	entries, err := os.ReadDir(ws)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".agnx-", "no temporary file left")
	}
}

func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	r, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

func keys(m manifest) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
