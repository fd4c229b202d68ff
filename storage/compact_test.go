package storage

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
)

// compactFixture writes sessions of events and prunes most of them, so
// the file holds free pages, and closes it.
func compactFixture(t testing.TB, path string) {
	t.Helper()
	s, err := Open(path, &Options{NoSync: true})
	require.NoError(t, err)
	for i := range 4 {
		id := fmt.Sprintf("s%d", i)
		require.NoError(t, s.Update(func(tx *Tx) error {
			if err := tx.CreateSession(id, []byte(`{"id":"`+id+`"}`)); err != nil {
				return err
			}
			for seq := uint64(1); seq <= 500; seq++ {
				if err := tx.AppendEvent(id, seq, bytes.Repeat([]byte{'e'}, 900)); err != nil {
					return err
				}
			}
			return tx.PutCheckpoint(id, 500, []byte("state"))
		}))
		require.NoError(t, s.Update(func(tx *Tx) error { _, err := tx.PruneEvents(id, 490); return err }))
	}
	require.NoError(t, s.Update(func(tx *Tx) error { return tx.PutKV("chat/x", []byte("y")) }))
	require.NoError(t, s.Close())
}

// checkFixture checks that the compacted or original file holds the
// fixture whole.
func checkFixture(t testing.TB, path string) {
	t.Helper()
	s, err := Open(path, &Options{ReadOnly: true})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Check())
	require.NoError(t, s.View(func(tx *Tx) error {
		for i := range 4 {
			id := fmt.Sprintf("s%d", i)
			n, err := tx.EventsCount(id)
			require.NoError(t, err)
			assert.Equal(t, 10, n)
			last, err := tx.LastSeq(id)
			require.NoError(t, err)
			assert.Equal(t, uint64(500), last)
			seq, cp, err := tx.LatestCheckpoint(id)
			require.NoError(t, err)
			assert.Equal(t, uint64(500), seq)
			assert.Equal(t, []byte("state"), cp)
		}
		v, err := tx.KV("chat/x")
		require.NoError(t, err)
		assert.Equal(t, []byte("y"), v)
		return nil
	}))
}

func TestCompact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agnx.db")
	compactFixture(t, path)
	rep, err := Compact(path)
	require.NoError(t, err)
	assert.Less(t, rep.After, rep.Before)
	t.Logf("%d → %d bytes", rep.Before, rep.After)
	checkFixture(t, path)
	assert.NoFileExists(t, path+".compact")
	s, err := Open(path, nil) // the schema version came along: no migration, no error
	require.NoError(t, err)
	require.NoError(t, s.Close())
}

func TestCompact_Locked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agnx.db")
	compactFixture(t, path)
	s, err := Open(path, nil)
	require.NoError(t, err)
	defer s.Close()
	_, err = Compact(path)
	assert.ErrorIs(t, err, ErrLocked)
	_, err = Compact(filepath.Join(t.TempDir(), "none.db"))
	assert.ErrorContains(t, err, "no database at")
}

// TestCompact_Failures stops Compact at each step: before the rename the
// old file is there untouched and the copy is gone; after it, the new one.
func TestCompact_Failures(t *testing.T) {
	stop := func() error { return fmt.Errorf("injected") }
	for name, hooks := range map[string]compactHooks{
		"copied": {copied: stop}, "checked": {checked: stop}, "renamed": {renamed: stop},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agnx.db")
			compactFixture(t, path)
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			_, err = compact(path, hooks)
			require.ErrorContains(t, err, "injected")
			assert.NoFileExists(t, path+".compact")
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			if name == "renamed" {
				assert.Less(t, len(after), len(before))
			} else {
				assert.Equal(t, before, after)
			}
			checkFixture(t, path)
		})
	}
}

const compactKillEnv = "AGNX_STORAGE_COMPACT_KILL"

// TestCompactKillHelper is the child of TestCompact_Kill: it compacts the
// file and SIGKILLs itself at the step named.
func TestCompactKillHelper(t *testing.T) {
	step := os.Getenv(compactKillEnv)
	if step == "" {
		t.Skip("only run as a child of TestCompact_Kill")
	}
	path := os.Getenv(crashEnvDB)
	kill := func() error { return syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	var h compactHooks
	switch step {
	case "copied":
		h.copied = kill
	case "checked":
		h.checked = kill
	case "renamed":
		h.renamed = kill
	}
	_, err := compact(path, h)
	fmt.Println("not killed:", err)
	os.Exit(3)
}

// TestCompact_Kill SIGKILLs a compaction at each step: the database opens
// whole afterwards, old or new, and the next Compact clears what was left.
func TestCompact_Kill(t *testing.T) {
	testenv.SkipIfNoReexec(t, "re-executes the test binary as the child it kills")
	for _, step := range []string{"copied", "checked", "renamed"} {
		t.Run(step, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agnx.db")
			compactFixture(t, path)
			cmd := exec.Command(os.Args[0], "-test.run=^TestCompactKillHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), compactKillEnv+"="+step, crashEnvDB+"="+path)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "%s", out)
			ws, _ := ee.Sys().(syscall.WaitStatus)
			require.Equal(t, syscall.SIGKILL, ws.Signal(), "%s", out)
			checkFixture(t, path)
			_, err = Compact(path)
			require.NoError(t, err)
			assert.NoFileExists(t, path+".compact")
			checkFixture(t, path)
		})
	}
}
