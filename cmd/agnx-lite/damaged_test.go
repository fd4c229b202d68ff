package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage/storagetest"
)

// Every command that opens the database, on every kind of damage: exit 78
// (no systemd restart loop), the one sentence doctor gives on stderr, no
// panic, and the file left as it was (a 0-byte file is not replaced).
func TestCLI_DamagedDatabase(t *testing.T) {
	c := newCLI(t)
	code, _, errs := c.run("run", "-m", "remember the milk")
	require.Equal(t, 0, code, errs)
	ids := c.sessionIDs()
	require.Len(t, ids, 1)
	archive := filepath.Join(t.TempDir(), "assistant.tar.gz")
	code, _, errs = c.run("agent", "export", "assistant", "--with-sessions", "-o", archive)
	require.Equal(t, 0, code, errs)
	db := filepath.Join(c.dir, "agnx.db")
	good, err := os.ReadFile(db)
	require.NoError(t, err)

	commands := [][]string{
		{"serve"},
		{"run", "-m", "hi"},
		{"run", "--session", ids[0], "-m", "hi"},
		{"chat"},
		{"attach", ids[0]},
		{"attach", "--list"},
		{"session", "list"},
		{"session", "show", ids[0]},
		{"session", "export", ids[0]},
		{"session", "delete", ids[0]},
		{"agent", "export", "assistant", "--with-sessions", "-o", filepath.Join(t.TempDir(), "x.tar.gz")},
		{"agent", "import", "--force", "--trust", archive},
	}
	for _, d := range storagetest.Damages {
		t.Run(d.Name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(db, good, 0o600))
			d.Apply(t, db)
			damaged, err := os.ReadFile(db)
			require.NoError(t, err)
			_, doctorOut, _ := c.run("doctor")
			var sentence string
			for _, l := range strings.Split(doctorOut, "\n") {
				if strings.HasPrefix(l, "fail  database") {
					sentence = strings.TrimSpace(strings.TrimPrefix(l, "fail  database"))
				}
			}
			require.Regexp(t, `^the database `+db+` is damaged \(.+\): move it aside and restore a backup`, sentence)
			for _, args := range commands {
				var out bytes.Buffer
				code, errs := c.runIn(strings.NewReader(""), &out, args...)
				assert.Equal(t, 78, code, "%v: %s", args, errs)
				errs = strings.TrimPrefix(errs, "unpacking assistant.tar.gz\n") // import's progress, before it opens the database
				assert.Equal(t, "agnx-lite: "+sentence+"\n", errs, "%v: the sentence doctor gives, once", args)
				assert.NotContains(t, out.String(), "panic", args)
				now, err := os.ReadFile(db)
				require.NoError(t, err)
				assert.True(t, bytes.Equal(damaged, now), "%v left the file as it was", args)
			}

			// The way out the sentence names: db recover keeps what is
			// readable, the damaged file aside, and every command works again.
			code, out, errs := c.run("db", "recover")
			if d.Name == "empty" || d.Name == "garbage meta pages" {
				assert.Equal(t, 1, code)
				assert.Contains(t, errs, "nothing can be recovered from "+db)
				return
			}
			require.Equal(t, 0, code, errs)
			assert.Contains(t, out, db+" now holds the copy; the damaged file is kept as "+db+".damaged-")
			code, _, errs = c.run("session", "list")
			assert.Equal(t, 0, code, errs)
			code, _, errs = c.run("run", "-m", "hi again")
			assert.Equal(t, 0, code, errs)
			aside, err := filepath.Glob(db + ".damaged-*")
			require.NoError(t, err)
			require.Len(t, aside, 1)
			kept, err := os.ReadFile(aside[0])
			require.NoError(t, err)
			assert.True(t, bytes.Equal(damaged, kept), "the damaged file is kept as it was")
			require.NoError(t, os.Remove(aside[0]))
		})
	}
}
