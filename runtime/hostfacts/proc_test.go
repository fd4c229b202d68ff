package hostfacts

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A process's memory comes from statm: the anonymous part is the resident
// set less the file and shared pages.
func TestReader_Process(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	fakeProcess(files, 42, 1, 1000, 300)
	writeFiles(t, root, files)
	r := &Reader{ProcDir: root}

	m, err := r.Process(42)
	require.NoError(t, err)
	page := int64(os.Getpagesize())
	assert.Equal(t, Mem{RSS: 1000 * page, Anon: 700 * page, File: 300 * page}, m)

	_, err = r.Process(43)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot read the memory of process 43")
}

// The peak is the kernel's VmHWM; a status without one, or with a line
// that is not a size, is an error that quotes a bounded part of it.
func TestReader_PeakRSS(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"42/status": statusSample,
		"43/status": "VmRSS:\t 100 kB\n",
		"44/status": "VmHWM:\t 100 MB\n",
		"45/status": "VmHWM:\t" + strings.Repeat("9", 5000) + " kB\n",
	})
	r := &Reader{ProcDir: root}
	hwm, err := r.PeakRSS(42)
	require.NoError(t, err)
	assert.Equal(t, int64(31880<<10), hwm)

	for pid, want := range map[int]string{43: "no VmHWM line", 44: `"100 MB"`, 45: "where a size in kB was expected", 46: "cannot read"} {
		_, err := r.PeakRSS(pid)
		require.Error(t, err, pid)
		assert.Contains(t, err.Error(), want)
		assert.Less(t, len(err.Error()), 300, "the error quotes a bounded part of the line")
	}
}

// The tree's memory is the root's and every descendant's, not its
// parent's or a stranger's.
func TestTree_RSS(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	fakeProcess(files, 1, 0, 5000, 0)   // init: not in the tree
	fakeProcess(files, 10, 1, 100, 0)   // the MCP server's sandbox
	fakeProcess(files, 11, 10, 200, 50) // the server
	fakeProcess(files, 12, 11, 400, 0)  // a child it started
	fakeProcess(files, 13, 1, 8000, 0)  // a stranger
	writeFiles(t, root, files)
	r := &Reader{ProcDir: root}
	page := int64(os.Getpagesize())
	tree := r.Tree()
	assert.Equal(t, 700*page, tree.RSS(10))
	assert.Equal(t, 600*page, tree.RSS(11))
	assert.Zero(t, tree.RSS(99), "a process gone")
	assert.Zero(t, (&Reader{ProcDir: root + "/none"}).Tree().RSS(10), "no /proc")
}

// The readers against this machine's /proc: the test process has a
// resident set, part of it anonymous, and the reader of another process
// sees the same process.
func TestReader_OnThisMachine(t *testing.T) {
	var r Reader
	before := rssAnon(t)
	self, err := r.Self()
	require.NoError(t, err)
	after := rssAnon(t)
	assert.Positive(t, self.Anon)
	assert.LessOrEqual(t, self.Anon, self.RSS)
	// statm's resident less shared is status's RssAnon: the same counters.
	assert.InDelta(t, (before+after)/2, self.Anon, float64(abs(after-before)/2+1<<20))

	other, err := r.Process(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, other.RSS)

	hwm, err := r.PeakRSS(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, hwm)

	assert.Positive(t, r.Tree().RSS(os.Getpid()))
}

// The environment does not move the zero Reader off the machine's /proc:
// a daemon measures itself even where HOST_PROC names another.
func TestReader_IgnoresHostProc(t *testing.T) {
	t.Setenv("HOST_PROC", t.TempDir())
	t.Setenv("HOST_SYS", t.TempDir())
	var r Reader
	_, err := r.Self()
	require.NoError(t, err)
	_, err = r.Memory(t.Context())
	require.NoError(t, err)
}

// rssAnon is RssAnon from /proc/self/status.
func rssAnon(t *testing.T) int64 {
	data, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			n, err := kBytes([]byte(v))
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no RssAnon in /proc/self/status")
	return 0
}

func abs(n int64) int64 { return max(n, -n) }

func FuzzKBytes(f *testing.F) {
	f.Add([]byte("\t   31880 kB"))
	f.Add([]byte("\t 1099511627776 kB"))
	f.Add([]byte(" x kB"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, v []byte) {
		n, err := kBytes(v)
		if err != nil {
			assert.Zero(t, n)
			assert.Less(t, len(err.Error()), 300)
			return
		}
		assert.GreaterOrEqual(t, n, int64(0))
		assert.Zero(t, n%1024, "a kB count in bytes")
	})
}
