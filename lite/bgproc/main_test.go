package bgproc

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

func TestMain(m *testing.M) {
	bwrap.Init() // the test binary is the sandbox's init, as agnx-lite is
	os.Exit(m.Run())
}

// testStore is a store whose commits are plain updates.
type testStore struct{ *storage.Store }

func (s testStore) Commit(_ context.Context, fn func(*storage.Tx) error) error { return s.Update(fn) }

func openStore(t *testing.T, path string) testStore {
	st, err := storage.Open(path, &storage.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return testStore{st}
}

// harness is a manager, one agent's tool over a workspace, and what the
// manager tells (notices, ends).
type harness struct {
	m     *Manager
	tool  *Tool
	ws    string
	st    testStore
	mode  string
	notes chan string
	exits chan string
}

// modes are the sandboxes a test runs under: bwrap where usable, trust
// always.
func modes(t *testing.T) []string {
	testenv.SkipIfNoReexec(t, "the sandbox runs the re-executed test binary as its init")
	out := []string{"trust"}
	if st := bwrap.Probe(context.Background()); st.Usable {
		out = append(out, "bwrap")
	} else {
		t.Log("bubblewrap unusable here, trust mode only: " + st.Problem)
	}
	return out
}

func newHarness(t *testing.T, mode string, o Options) *harness {
	dir := t.TempDir()
	h := &harness{ws: filepath.Join(dir, "ws"), mode: mode, notes: make(chan string, 16), exits: make(chan string, 16)}
	require.NoError(t, os.MkdirAll(h.ws, 0o755))
	if o.Store == nil {
		h.st = openStore(t, filepath.Join(dir, "agnx.db"))
		o.Store = h.st
	}
	o.Notify = func(agent, sid, text string) {
		if agent == "ada" && sid == "s1" {
			h.notes <- text
		}
	}
	o.OnExit = func(handle string) { h.exits <- handle }
	h.m = New(o)
	t.Cleanup(h.m.Close)
	h.tool = h.m.Tool(h.sandbox(mode))
	return h
}

func (h *harness) sandbox(mode string) Sandbox {
	r := &bwrap.Runner{Trust: mode == "trust"}
	ws := h.ws
	return Sandbox{Agent: "ada", Workspace: ws, Start: func(ctx context.Context, dir string, cmd []string) (*bwrap.Process, error) {
		return r.Start(ctx, bwrap.Policy{Workspace: ws, Chdir: dir}, cmd)
	}}
}

func callCtx() context.Context {
	return runtime.WithCall(context.Background(), runtime.CallInfo{SessionID: "s1", Agent: "ada"})
}

func (h *harness) run(t *testing.T, args string) runtime.Result {
	t.Helper()
	res, err := h.tool.Run(callCtx(), []byte(args))
	require.NoError(t, err)
	return res
}

// spawn starts command and returns its handle.
func (h *harness) spawn(t *testing.T, args string) string {
	t.Helper()
	res := h.run(t, args)
	require.False(t, res.IsError, res.Content)
	var sr spawnResult
	require.NoError(t, json.Unmarshal([]byte(res.Content), &sr), res.Content)
	require.Equal(t, "running", sr.Status)
	require.True(t, strings.HasPrefix(sr.Handle, "proc_"), sr.Handle)
	return sr.Handle
}

// hangAfter is when a wait for a notice or an exit calls it a hang. It
// never lengthens a passing run; it is this long because the process
// starts through this test binary re-executed as the sandbox's init,
// which under qemu on a loaded 2-core box took over 30 s to print.
const hangAfter = 2 * time.Minute

// note waits for the next notice.
func (h *harness) note(t *testing.T) string {
	t.Helper()
	select {
	case n := <-h.notes:
		return n
	case <-time.After(hangAfter):
		t.Fatal("no notice came")
		return ""
	}
}

// exit waits for the next process's end.
func (h *harness) exit(t *testing.T) string {
	t.Helper()
	select {
	case n := <-h.exits:
		return n
	case <-time.After(hangAfter):
		t.Fatal("no process ended")
		return ""
	}
}

// status returns a handle's status answer.
func (h *harness) status(t *testing.T, handle string) statusView {
	t.Helper()
	res := h.run(t, `{"action":"status","handle":"`+handle+`"}`)
	require.False(t, res.IsError, res.Content)
	var v statusView
	require.NoError(t, json.Unmarshal([]byte(res.Content), &v), res.Content)
	return v
}

func callCtxSession(sid string) context.Context {
	return runtime.WithCall(context.Background(), runtime.CallInfo{SessionID: sid, Agent: "ada"})
}

func openStoreF(f *testing.F, path string) testStore {
	st, err := storage.Open(path, &storage.Options{NoSync: true})
	require.NoError(f, err)
	f.Cleanup(func() { st.Close() })
	return testStore{st}
}
