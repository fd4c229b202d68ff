package pages

import (
	"strings"
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
func TestParse(t *testing.T) {
	ms, err := parse(strings.NewReader(smapsSample), 4242)
	require.NoError(t, err)
	assert.Equal(t, []Range{
		{Start: 0x400000, End: 0xc00000, RSS: 7104 << 10},
		{Start: 0xc00000, End: 0x1400000, RSS: 6852 << 10},
	}, ms)
}

// Garbage in smaps is skipped, never a panic.
func FuzzParse(f *testing.F) {
	f.Add(smapsSample, uint64(4242))
	f.Add("zzzz-yyyy r-xp 0 0 0 /x\nRss: 12 kB\n", uint64(0))
	f.Add("-\n:\n1-0 r 0 0 1\n", uint64(1))
	f.Fuzz(func(t *testing.T, in string, ino uint64) {
		ms, _ := parse(strings.NewReader(in), ino)
		for _, m := range ms {
			assert.Less(t, m.Start, m.End)
		}
	})
}

// The running test binary's pages leave its resident set, and the code
// goes on running: they come back from the page cache as it needs them.
func TestDrop(t *testing.T) {
	if testenv.Emulated() {
		t.Skip("qemu-user keeps the guest's file mappings itself: madvise does not reach the host's page tables")
	}
	before, err := Find("/proc/self/exe")
	require.NoError(t, err)
	require.NotEmpty(t, before, "the executable's read-only mappings are found")
	require.NoError(t, Drop(before))
	after, err := Find("/proc/self/exe")
	require.NoError(t, err)
	assert.Less(t, rss(after), rss(before), "mapped pages of the binary: %d kB before, %d kB after", rss(before)>>10, rss(after)>>10)
	require.NoError(t, Drop(after), "dropping again is harmless")
}

func rss(rs []Range) int64 {
	var n int64
	for _, r := range rs {
		n += r.RSS
	}
	return n
}
