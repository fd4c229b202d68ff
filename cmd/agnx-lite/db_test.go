package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

func TestDB_Compact(t *testing.T) {
	c := newCLI(t)
	code, _, errs := c.run("db", "compact")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "nothing to compact")

	code, _, errs = c.run("run", "-m", "remember the milk")
	require.Equal(t, 0, code, errs)
	code, out, errs := c.run("db", "compact")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^compacted .*agnx\.db: [0-9.]+ [KMG]?i?B → [0-9.]+ [KMG]?i?B\n$`, out)
	assert.Regexp(t, `^compacting agnx\.db \([0-9.]+ [KMG]?i?B\)\n$`, errs, "not a terminal: the step as a line")
	code, out, errs = c.run("session", "list")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "remember the milk")

	c.serve()
	code, _, errs = c.run("db", "compact")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "holds the database: stop it first")
	code, _, errs = c.run("db", "shrink")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, "recover or compact")
}

// An archived session exports whole, as before it was archived.
func TestSessionExport_Archived(t *testing.T) {
	c := newCLI(t)
	code, _, errs := c.run("run", "-m", "remember the milk")
	require.Equal(t, 0, code, errs)
	ids := c.sessionIDs()
	require.Len(t, ids, 1)
	code, before, errs := c.run("session", "export", ids[0])
	require.Equal(t, 0, code, errs)

	st, err := storage.Open(filepath.Join(c.dir, "agnx.db"), nil)
	require.NoError(t, err)
	require.NoError(t, st.Update(func(tx *storage.Tx) error {
		seq, cp, err := tx.LatestCheckpoint(ids[0])
		if err != nil {
			return err
		}
		cp = append([]byte(`{"window_seq":`+strconv.FormatUint(seq+1, 10)+`,`), cp[1:]...)
		return tx.PutCheckpoint(ids[0], seq, cp)
	}))
	r, err := runtime.Retain(st, ids[0], runtime.RetainOptions{Mode: runtime.CompactionArchive})
	require.NoError(t, err)
	require.Positive(t, r.Archived)
	require.NoError(t, st.Close())

	code, after, errs := c.run("session", "export", ids[0])
	require.Equal(t, 0, code, errs)
	assert.Equal(t, before, after)
	code, lite, errs := c.run("session", "export", "--format", "lite", ids[0])
	require.Equal(t, 0, code, errs)
	assert.Equal(t, r.Archived, strings.Count(lite, "\n"), "every event from the archive, once")
}
