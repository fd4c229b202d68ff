package pages

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

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
		kept, _ := confirmed(append([]Range(nil), ms...), strings.NewReader(in), ino)
		assert.Subset(t, ms, kept, "confirmed only ever removes ranges")
	})
}

// What qemu-arm 7.2 gave a 32-bit guest for one file mapped once: maps is
// emulated (the guest's addresses), smaps is the host's, each range a page
// higher. Dropping the smaps range zeroed the page after the mapping.
const (
	qemuArmMaps = `00010000-000d1000 r-xp 00000000 fe:00 10585961 /tmp/probe4/p4.arm
3fc31000-3fc39000 r--s 00000000 fe:00 9977885 /tmp/p41985271115
`
	qemuArmSmaps = `00011000-000d2000 r--p 00000000 fe:00 10585961 /tmp/probe4/p4.arm
Rss:                 100 kB
Anonymous:             0 kB
3fc32000-3fc3a000 r--s 00000000 fe:00 9977885 /tmp/p41985271115
Rss:                  32 kB
Anonymous:             0 kB
`
)

// A range is dropped only where maps lists it with the same bounds: under
// qemu-arm, whose smaps is one page off, nothing is.
func TestConfirmed(t *testing.T) {
	found, err := parse(strings.NewReader(qemuArmSmaps), 9977885)
	require.NoError(t, err)
	require.Len(t, found, 1, "smaps lists the mapping, at the host's address")
	kept, err := confirmed(found, strings.NewReader(qemuArmMaps), 9977885)
	require.NoError(t, err)
	assert.Empty(t, kept, "maps puts the mapping a page lower: nothing is dropped")

	kept, err = confirmed([]Range{{Start: 0x3fc31000, End: 0x3fc39000, RSS: 1}}, strings.NewReader(qemuArmMaps), 9977885)
	require.NoError(t, err)
	assert.Equal(t, []Range{{Start: 0x3fc31000, End: 0x3fc39000, RSS: 1}}, kept, "where they agree, the range stays")
}

// Find returns the file's own mappings, exactly, and nothing beside them:
// natively all three, under qemu-user those its smaps and maps agree on
// (none for a 32-bit arm guest). Under qemu-arm 7.2 it used to return each
// mapping a page too high, and the memory guard zeroed Go heap pages.
func TestFind_OnlyTheFilesMappings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mapped")
	require.NoError(t, os.WriteFile(path, make([]byte, 64<<10), 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	mine := map[[2]uintptr]bool{}
	for range 3 {
		m, err := syscall.Mmap(int(f.Fd()), 0, 32<<10, syscall.PROT_READ, syscall.MAP_SHARED)
		require.NoError(t, err)
		t.Cleanup(func() { _ = syscall.Munmap(m) })
		_ = m[0] + m[len(m)-1] // resident
		start := uintptr(unsafe.Pointer(&m[0]))
		mine[[2]uintptr{start, start + uintptr(len(m))}] = true
	}
	rs, err := Find(path)
	require.NoError(t, err)
	for _, r := range rs {
		assert.True(t, mine[[2]uintptr{r.Start, r.End}], "%#x-%#x is not one of the file's mappings %v", r.Start, r.End, mine)
	}
	if !testenv.Emulated() {
		assert.Len(t, rs, 3, "each of the three mappings is found")
	}
	require.NoError(t, Drop(rs))
}

// The running test binary's pages leave its resident set, and the code
// goes on running: they come back from the page cache as it needs them.
func TestDrop(t *testing.T) {
	if testenv.Emulated() {
		t.Skip("under qemu-user the stat of /proc/self/exe reaches qemu's own binary, which the guest does not map")
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
