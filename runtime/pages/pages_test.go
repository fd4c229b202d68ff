package lite

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
)

const smapsSample = `00400000-00c00000 r-xp 00000000 fd:00 4242 /usr/bin/agnx-lite
Size:               8192 kB
Rss:                7104 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
00c00000-01400000 r--p 00800000 fd:00 4242 /usr/bin/agnx-lite (deleted)
Size:               8192 kB
Rss:                6852 kB
Anonymous:             0 kB
01400000-01480000 rw-p 01000000 fd:00 4242 /usr/bin/agnx-lite
Rss:                 372 kB
Anonymous:           100 kB
01480000-01490000 r--p 01080000 fd:00 4242 /usr/bin/agnx-lite
Rss:                   8 kB
Anonymous:             4 kB
7f0000000000-7f0000100000 r--s 00000000 fd:00 99 /data/agnx.db
Rss:                 512 kB
Anonymous:             0 kB
7f0000200000-7f0000400000 rw-p 00000000 00:00 0
Rss:                2016 kB
Anonymous:          2016 kB
`

// Only the executable's mappings that are neither writable nor hold a
// copied-on-write page are dropped: never the database's, the heap, or a
// mapping that was written to.
func TestExeMappings(t *testing.T) {
	ms, err := exeMappings(strings.NewReader(smapsSample), 4242)
	require.NoError(t, err)
	assert.Equal(t, []mapping{
		{start: 0x400000, end: 0xc00000, rss: 7104 << 10},
		{start: 0xc00000, end: 0x1400000, rss: 6852 << 10},
	}, ms)
}

// Garbage in smaps is skipped, never a panic.
func FuzzExeMappings(f *testing.F) {
	f.Add(smapsSample, uint64(4242))
	f.Add("zzzz-yyyy r-xp 0 0 0 /x\nRss: 12 kB\n", uint64(0))
	f.Add("-\n:\n1-0 r 0 0 1\n", uint64(1))
	f.Fuzz(func(t *testing.T, in string, ino uint64) {
		ms, _ := exeMappings(strings.NewReader(in), ino)
		for _, m := range ms {
			assert.Less(t, m.start, m.end)
		}
	})
}

// The running test binary's pages leave its resident set, and the code
// goes on running: they come back from the page cache as it needs them.
func TestExePages_Drop(t *testing.T) {
	if testenv.Emulated() {
		t.Skip("qemu-user keeps the guest's file mappings itself: madvise does not reach the host's page tables")
	}
	before := exeRSS(t)
	var p exePages
	require.NoError(t, p.drop())
	require.NotEmpty(t, p.ranges, "the executable's read-only mappings are found")
	after := exeRSS(t)
	assert.Less(t, after, before, "mapped pages of the binary: %d kB before, %d kB after", before>>10, after>>10)
	require.NoError(t, p.drop(), "dropping again is harmless")
}

// exeRSS sums the resident bytes of the executable's read-only mappings.
func exeRSS(t *testing.T) int64 {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat("/proc/self/exe", &st))
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	ms, err := exeMappings(f, st.Ino)
	require.NoError(t, err)
	var n int64
	for _, m := range ms {
		n += m.rss
	}
	return n
}
