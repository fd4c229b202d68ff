package hostfacts

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const smapsSample = `00400000-00c00000 r-xp 00000000 fd:00 4242 /usr/bin/agnx-lite
Size:               8192 kB
Rss:                7104 kB
VmFlags: rd ex mr mw me
00c00000-01400000 r--p 00800000 fd:00 4242 /usr/bin/agnx-lite
Rss:                6852 kB
01400000-01480000 rw-p 00000000 00:00 0                                  [heap]
Rss:                 372 kB
7f0000000000-7f0000100000 r--s 00000000 fd:00 99 /data/my agnx.db
Rss:                 512 kB
7f0000200000-7f0000400000 rw-p 00000000 00:00 0
Rss:                2016 kB
`

func TestReader_Mappings(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"42/smaps": smapsSample})
	ms, err := (&Reader{ProcDir: root}).Mappings(42)
	require.NoError(t, err)
	assert.Equal(t, []Mapping{
		{Name: "/usr/bin/agnx-lite", Perms: "r-xp", RSS: 7104 << 10},
		{Name: "/usr/bin/agnx-lite", Perms: "r--p", RSS: 6852 << 10},
		{Name: "[heap]", Perms: "rw-p", RSS: 372 << 10},
		{Name: "/data/my agnx.db", Perms: "r--s", RSS: 512 << 10},
		{Name: "", Perms: "rw-p", RSS: 2016 << 10},
	}, ms)
	_, err = (&Reader{ProcDir: root}).Mappings(43)
	require.Error(t, err)
}

// Garbage in smaps is skipped, never a panic or a negative size.
func FuzzParseSmaps(f *testing.F) {
	f.Add([]byte(smapsSample))
	f.Add([]byte("Rss: 12 kB\n1-2 r 0 0 0\nRss: -5 kB\n"))
	f.Add([]byte("-\n:\n1-0 r 0 0 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, m := range parseSmaps(data) {
			assert.GreaterOrEqual(t, m.RSS, int64(0))
			assert.NotEmpty(t, m.Perms)
		}
	})
}

// This test process's threads and open files: a file it opens is among
// them.
func TestReader_ThreadsOpenFiles(t *testing.T) {
	var r Reader
	n, err := r.Threads(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, n)

	path := filepath.Join(t.TempDir(), "open")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	files, err := r.OpenFiles(os.Getpid())
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks(path)
	require.NoError(t, err)
	assert.True(t, slices.Contains(files, real), "%q among %q", real, files)

	_, err = (&Reader{ProcDir: t.TempDir()}).Threads(42)
	require.Error(t, err)
}

func TestReader_Model(t *testing.T) {
	pi := t.TempDir()
	writeFiles(t, pi, map[string]string{"firmware/devicetree/base/model": "Raspberry Pi 4 Model B Rev 1.4\x00"})
	for name, tc := range map[string]struct {
		r    *Reader
		want string
	}{
		"board": {&Reader{ProcDir: t.TempDir(), SysDir: pi}, "Raspberry Pi 4 Model B Rev 1.4"},
		"x86": {cpuinfo(t, "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n"),
			"AMD EPYC 7B13"},
		"arm server": {cpuinfo(t, "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n"), "Neoverse-N1"},
		"nothing":    {&Reader{ProcDir: t.TempDir(), SysDir: t.TempDir()}, "unknown"},
	} {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tc.want, tc.r.Model(t.Context())) })
	}
}

func cpuinfo(t *testing.T, text string) *Reader {
	proc := t.TempDir()
	writeFiles(t, proc, map[string]string{"cpuinfo": text})
	return &Reader{ProcDir: proc, SysDir: t.TempDir()}
}

func TestKernel(t *testing.T) {
	data, err := os.ReadFile("/proc/sys/kernel/osrelease")
	require.NoError(t, err)
	assert.Equal(t, string(data[:len(data)-1]), Kernel())
}
