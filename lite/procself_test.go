package lite

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statusSample is the memory part of a real /proc/PID/status (Linux 6.x).
const statusSample = "Name:\tagnx-lite\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t4242\n" +
	"VmPeak:\t 1262412 kB\nVmSize:\t 1262412 kB\nVmHWM:\t   31880 kB\nVmRSS:\t   29876 kB\n" +
	"RssAnon:\t   12044 kB\nRssFile:\t   17832 kB\nRssShmem:\t       0 kB\nThreads:\t7\n"

const meminfoSample = "MemTotal:         933448 kB\nMemFree:          112340 kB\nMemAvailable:     611204 kB\nBuffers:           30112 kB\n"

func TestParseKBPairStatus(t *testing.T) {
	rss, anon, err := parseKBPair([]byte(statusSample), "VmRSS:", "RssAnon:")
	require.NoError(t, err)
	assert.Equal(t, int64(29876<<10), rss)
	assert.Equal(t, int64(12044<<10), anon)

	total, avail, err := parseKBPair([]byte(meminfoSample), "MemTotal:", "MemAvailable:")
	require.NoError(t, err)
	assert.Equal(t, int64(933448<<10), total)
	assert.Equal(t, int64(611204<<10), avail)
}

func TestParseKBPairRefusesWhatIsNotThere(t *testing.T) {
	for name, tc := range map[string]struct{ data, want string }{
		"old kernel":  {"VmRSS:\t 100 kB\n", "no RssAnon line: agnx-lite needs Linux 4.5 or later"},
		"empty":       {"", "no VmRSS line"},
		"not kB":      {"VmRSS:\t 100 MB\nRssAnon:\t 1 kB\n", `"100 MB"`},
		"not number":  {"VmRSS:\t x kB\nRssAnon:\t 1 kB\n", "where a size in kB was expected"},
		"negative":    {"VmRSS:\t -5 kB\nRssAnon:\t 1 kB\n", "where a size in kB was expected"},
		"overflowing": {"VmRSS:\t 9223372036854775807 kB\nRssAnon:\t 1 kB\n", "where a size in kB was expected"},
		"long line":   {"RssAnon:\t 1 kB\nVmRSS:\t" + string(make([]byte, 5000)) + "\n", "report it with your kernel version"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := parseKBPair([]byte(tc.data), "VmRSS:", "RssAnon:")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Less(t, len(err.Error()), 300, "the error quotes a bounded part of the line")
		})
	}
}

// The readers against this machine's real /proc: the test process has a
// resident set, part of it anonymous, and another process's reader sees
// the same process.
func TestProcReadersOnThisMachine(t *testing.T) {
	rss, anon, err := selfMem()
	require.NoError(t, err)
	assert.Positive(t, anon)
	assert.LessOrEqual(t, anon, rss)

	other, err := pidRSS(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, other)

	total, avail, err := hostMem()
	require.NoError(t, err)
	assert.Positive(t, avail)
	assert.LessOrEqual(t, avail, total)

	_, err = pidRSS(1 << 30)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot read /proc/1073741824/status")
}

func FuzzParseKBPair(f *testing.F) {
	f.Add([]byte(statusSample))
	f.Add([]byte(meminfoSample))
	f.Add([]byte("VmRSS:\t 1 kB\nRssAnon:\t 1099511627776 kB\n"))
	f.Add([]byte("VmRSS: 1 kB\nVmRSS: x\nRssAnon: 2 kB"))
	f.Add([]byte("VmRSS:\t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b, err := parseKBPair(data, "VmRSS:", "RssAnon:")
		if err != nil {
			assert.Zero(t, a)
			assert.Zero(t, b)
			return
		}
		for _, v := range []int64{a, b} {
			assert.GreaterOrEqual(t, v, int64(0))
			assert.Zero(t, v%1024, "a kB count in bytes")
		}
	})
}
