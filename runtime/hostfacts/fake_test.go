package hostfacts

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeFiles writes name → content under root.
func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// fakeProcess is the stat and statm of a process whose parent is ppid and
// which holds rssPages resident, sharedPages of them file pages.
func fakeProcess(files map[string]string, pid, ppid, rssPages, sharedPages int) {
	files[fmt.Sprintf("%d/stat", pid)] = fmt.Sprintf("%d (p %d) S %d %d %d 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 2478413 3133440 %d 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
		pid, pid, ppid, pid, pid, rssPages)
	files[fmt.Sprintf("%d/statm", pid)] = fmt.Sprintf("%d %d %d 5 0 123 0\n", rssPages*4, rssPages, sharedPages)
}

// statusSample is the memory part of a real /proc/PID/status (Linux 6.x).
const statusSample = "Name:\tagnx-lite\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t4242\n" +
	"VmPeak:\t 1262412 kB\nVmSize:\t 1262412 kB\nVmHWM:\t   31880 kB\nVmRSS:\t   29876 kB\n" +
	"RssAnon:\t   12044 kB\nRssFile:\t   17832 kB\nRssShmem:\t       0 kB\nThreads:\t7\n"

const meminfoSample = "MemTotal:         933448 kB\nMemFree:          112340 kB\nMemAvailable:     611204 kB\nBuffers:           30112 kB\n" +
	"Cached:           400000 kB\nSwapTotal:        102396 kB\nSwapFree:         102396 kB\n"
