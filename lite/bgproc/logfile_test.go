package bgproc

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Past the cap the oldest half goes, behind a marker that counts what
// went; the file never passes the cap and ends with the latest line.
func TestLogFile_Cap(t *testing.T) {
	ws := t.TempDir()
	root, err := openRoot(ws)
	require.NoError(t, err)
	defer root.Close()
	const capBytes = 256 << 10
	lf, err := createLog(root, logName("proc_x"), capBytes)
	require.NoError(t, err)
	var chunk strings.Builder
	total := 0
	for i := range 40000 {
		fmt.Fprintf(&chunk, "line %06d\n", i)
		if chunk.Len() > 30000 || i == 39999 {
			total += chunk.Len()
			_, err := lf.Write([]byte(chunk.String()))
			require.NoError(t, err)
			chunk.Reset()
			require.LessOrEqual(t, lf.size, int64(capBytes))
		}
	}
	require.NoError(t, lf.Close())
	data, err := os.ReadFile(filepath.Join(ws, logName("proc_x")))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(data), capBytes)
	assert.Greater(t, len(data), capBytes/2-4096, "the last half is kept")
	first, rest, _ := strings.Cut(string(data), "\n")
	kept := len(rest)
	assert.Equal(t, fmt.Sprintf("[... %d bytes of earlier output were dropped: the log keeps its last 256 KiB ...]", total-kept), first)
	assert.True(t, strings.HasPrefix(rest, "line "), "the kept part starts at a line")
	assert.True(t, strings.HasSuffix(rest, "line 039999\n"))
	for line := range strings.SplitSeq(strings.TrimSuffix(rest, "\n"), "\n") {
		require.Len(t, line, len("line 000000"), "no line torn")
	}
}

// A log is never created through a symlink, nor read through one.
func TestLogFile_NoSymlink(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, logDir), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(outside, "x"), filepath.Join(ws, logName("proc_a"))))
	root, err := openRoot(ws)
	require.NoError(t, err)
	defer root.Close()
	_, err = createLog(root, logName("proc_a"), DefaultMaxLog)
	assert.ErrorContains(t, err, "remove what is in its way")
	_, err = os.Stat(filepath.Join(outside, "x"))
	assert.True(t, os.IsNotExist(err), "nothing written outside")

	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, logName("proc_b"))))
	_, err = readTail(ws, logName("proc_b"), 100)
	assert.Error(t, err)
	require.NoError(t, os.RemoveAll(filepath.Join(ws, logDir)))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, logDir)))
	_, err = readWindow(ws, logDir+"/secret", 0, 10)
	assert.Error(t, err, "a symlinked folder out of the workspace is not followed")
	_, err = createLog(root, logName("proc_c"), DefaultMaxLog)
	assert.Error(t, err)
	_, err = os.Stat(filepath.Join(outside, "proc_c.log"))
	assert.True(t, os.IsNotExist(err), "nothing written outside")
}

// log windows by lines, cuts long lines, bounds what one answer holds.
func TestReadWindow(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, logDir), 0o755))
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "l%d\n", i)
	}
	b.WriteString(strings.Repeat("x", 3*maxLine) + "\nafter\nno newline")
	require.NoError(t, os.WriteFile(filepath.Join(ws, logName("p")), []byte(b.String()), 0o644))
	got, err := readWindow(ws, logName("p"), 8, 2)
	require.NoError(t, err)
	assert.Equal(t, "l8\nl9", got)
	got, err = readWindow(ws, logName("p"), 10, 100)
	require.NoError(t, err)
	lines := strings.Split(got, "\n")
	require.Len(t, lines, 3)
	assert.True(t, strings.HasSuffix(lines[0], " [… line cut]"))
	assert.Less(t, len(lines[0]), maxLine+100)
	assert.Equal(t, []string{"after", "no newline"}, lines[1:])
	tail, err := readTail(ws, logName("p"), 20)
	require.NoError(t, err)
	assert.Equal(t, "after\nno newline", tail, "the tail starts at a line")
}

// A flood of output goes to the bounded file; the daemon's memory does
// not grow with it.
func TestManager_OutputPastCap(t *testing.T) {
	mode := modes(t)[len(modes(t))-1]
	h := newHarness(t, mode, Options{MaxLogBytes: 512 << 10})
	const flood = 64 << 20
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	res := h.run(t, fmt.Sprintf(`{"action":"spawn","wait":true,"command":"head -c %d /dev/zero | tr '\\0' 'x' | fold -w 99; echo the-end"}`, flood))
	goruntime.ReadMemStats(&after)
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "the-end")
	entries, err := os.ReadDir(filepath.Join(h.ws, logDir))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	info, err := entries[0].Info()
	require.NoError(t, err)
	assert.LessOrEqual(t, info.Size(), int64(512<<10), "the file stays under the cap")
	f, err := os.Open(filepath.Join(h.ws, logDir, entries[0].Name()))
	require.NoError(t, err)
	defer f.Close()
	first, err := bufio.NewReader(f).ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, first, "bytes of earlier output were dropped")
	grew := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d MiB of output allocated %d KiB", flood>>20, grew>>10)
	assert.Less(t, grew, uint64(flood/8), "memory does not follow the output")
}
