package runtime_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

const (
	retainCrashDB  = "AGNX_RETAIN_CRASH_DB"
	retainCrashSID = "AGNX_RETAIN_CRASH_SID"
)

// TestRetainCrashChild archives a session one event a pass, printing
// "pass" after each, until it is killed or nothing is left.
func TestRetainCrashChild(t *testing.T) {
	path := os.Getenv(retainCrashDB)
	if path == "" {
		t.Skip("runs only as TestRetain_Kill's child")
	}
	st, err := storage.Open(path, nil)
	if err != nil {
		fmt.Println("open-error", err)
		os.Exit(3)
	}
	for {
		r, err := runtime.Retain(st, os.Getenv(retainCrashSID), runtime.RetainOptions{Mode: runtime.CompactionArchive, MaxEvents: 1})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		if r.Pruned == 0 {
			fmt.Println("done")
			select {} // until killed
		}
		fmt.Println("pass")
	}
}

// withWindow rewrites the session's latest checkpoint with window_seq
// just past it, as a history window that starts after the checkpoint: the
// whole log up to the checkpoint may go.
func withWindow(t *testing.T, st *storage.Store, sid string) uint64 {
	t.Helper()
	var seq uint64
	require.NoError(t, st.Update(func(tx *storage.Tx) error {
		var cp []byte
		var err error
		if seq, cp, err = tx.LatestCheckpoint(sid); err != nil {
			return err
		}
		cp = append([]byte(`{"window_seq":`+strconv.FormatUint(seq+1, 10)+`,`), cp[1:]...)
		return tx.PutCheckpoint(sid, seq, cp)
	}))
	return seq
}

// TestRetain_Kill SIGKILLs a child archiving a session at random points
// (mid-append, between the fsync and the prune, after it): after each
// kill the archive and the database together hold every seq once, and the
// session loads and takes a turn.
func TestRetain_Kill(t *testing.T) {
	testenv.SkipIfNoReexec(t, "re-executes the test binary as the child it kills")
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	for i := range 8 {
		h.turn(sid, fmt.Sprintf("message %d", i))
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	for round := range 4 {
		cp := withWindow(t, h.store, sid)
		var first uint64
		require.NoError(t, h.store.View(func(tx *storage.Tx) (err error) { first, err = tx.FirstSeq(sid); return }))
		h.close()
		killAfter := 1 + rng.IntN(int(cp-first+1))
		out := killRetainChild(t, filepath.Join(h.dir, "agnx.db"), sid, killAfter)
		t.Logf("round %d: killed after %d of %d passes (%s)", round, killAfter, cp, out)
		h.start()
		got := eventSeqs(t, h.store, sid)
		last := got[len(got)-1]
		assert.Equal(t, upTo(last), got, "every seq once, archive and database together")
		evs := h.turn(sid, fmt.Sprintf("after kill %d", round))
		assert.Equal(t, runtime.EvTurnEnd, evs[len(evs)-1].Type)
		got = eventSeqs(t, h.store, sid)
		assert.Equal(t, upTo(got[len(got)-1]), got, "the turn's events follow")
	}
}

func eventSeqs(t *testing.T, st *storage.Store, sid string) []uint64 {
	t.Helper()
	var out []uint64
	require.NoError(t, runtime.ReadEvents(st, sid, 0, func(e runtime.Event) error { out = append(out, e.Seq); return nil }))
	return out
}

// killRetainChild runs the child on path until it printed killAfter
// passes (or was done), SIGKILLs it, and returns what it printed last.
func killRetainChild(t *testing.T, path, sid string, killAfter int) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRetainCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), retainCrashDB+"="+path, retainCrashSID+"="+sid)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	last := ""
	for n := 0; n < killAfter && sc.Scan(); {
		last = sc.Text()
		if strings.HasPrefix(last, "error") || strings.HasPrefix(last, "open-error") {
			t.Fatalf("child: %s", last)
		}
		if last == "done" {
			break
		}
		if last == "pass" {
			n++
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	return last
}
