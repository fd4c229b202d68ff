package toolset

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAnonExec(t *testing.T) {
	maps := `00400000-00c00000 r-xp 00000000 fd:00 4242 /usr/bin/agnx-lite
7f0000000000-7f0000100000 r-xp 00000000 00:00 0
7f0000200000-7f0000400000 rw-p 00000000 00:00 0
7f0000400000-7f0000401000 r-xp 00000000 00:00 0 [anon:wazero]
7f0000500000-7f0000600000 rwxp 00000000 00:00 0
7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]
garbage
`
	assert.Equal(t, int64(0x100000+0x1000+0x100000), anonExec(strings.NewReader(maps)),
		"anonymous executable mappings only: not the binary's, the heap's or the kernel's")
}
