package workers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
	"github.com/stretchr/testify/require"
)

// storeKV keeps job records in a real store, as the loop's kv does.
type storeKV struct{ s *storage.Store }

func (k storeKV) KV(_ context.Context, key string) (out []byte, err error) {
	err = k.s.View(func(tx *storage.Tx) error {
		out, err = tx.KV(key)
		return err
	})
	return out, err
}

func (k storeKV) PutKV(_ context.Context, key string, val []byte) error {
	return k.s.Update(func(tx *storage.Tx) error {
		if val == nil {
			return tx.DeleteKV(key)
		}
		return tx.PutKV(key, val)
	})
}

func openStore(t *testing.T, path string) *storage.Store {
	t.Helper()
	s, err := storage.Open(path, &storage.Options{NoSync: true})
	require.NoError(t, err)
	return s
}

// openStoreSynced opens the store as the daemon does, every commit
// synced: for the process that is killed.
func openStoreSynced(path string) (*storage.Store, error) { return storage.Open(path, nil) }

// scriptRunner is a worker that really works in Job.Dir: each run calls
// the next step, which edits files there and says what it did. It keeps
// the jobs it got, and hands out one session id per new session.
type scriptRunner struct {
	mu    sync.Mutex
	steps []func(ctx context.Context, job Job) (Outcome, error)
	jobs  []Job
}

func (r *scriptRunner) Run(ctx context.Context, job Job) (Outcome, error) {
	r.mu.Lock()
	n := len(r.jobs)
	r.jobs = append(r.jobs, job)
	step := r.steps[n]
	r.mu.Unlock()
	return step(ctx, job)
}

func (r *scriptRunner) got() []Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Job(nil), r.jobs...)
}

// writes returns a step that writes files (relative to Job.Dir; "" as a
// value removes the file) and ends its turn in session sid.
func writes(sid, text string, files map[string]string) func(context.Context, Job) (Outcome, error) {
	return func(_ context.Context, job Job) (Outcome, error) {
		for name, content := range files {
			p := filepath.Join(job.Dir, name)
			if content == "" {
				if err := os.Remove(p); err != nil {
					return Outcome{}, err
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return Outcome{}, err
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				return Outcome{}, err
			}
		}
		return Outcome{SessionID: sid, Text: text, Stop: "end_turn"}, nil
	}
}

// notices collects what the supervisor tells the user.
type notices struct {
	mu  sync.Mutex
	got []Notice
}

func (n *notices) add(x Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, x)
}

func (n *notices) all() []Notice {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Notice(nil), n.got...)
}

// fixture is a supervisor over a real store, a data dir and a workspace.
type fixture struct {
	sup     *Supervisor
	runner  *scriptRunner
	notes   *notices
	ws      string
	dataDir string
	dbPath  string
	store   *storage.Store
	tool    runtime.Tool
}

func newFixture(t *testing.T, timeout time.Duration, steps ...func(context.Context, Job) (Outcome, error)) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{runner: &scriptRunner{steps: steps}, notes: &notices{}, ws: filepath.Join(root, "ws"),
		dataDir: filepath.Join(root, "data"), dbPath: filepath.Join(root, "data", "agnx.db")}
	require.NoError(t, os.MkdirAll(f.ws, 0o755))
	require.NoError(t, os.MkdirAll(f.dataDir, 0o700))
	f.reopen(t, timeout)
	t.Cleanup(func() { f.store.Close() })
	return f
}

// reopen builds the supervisor again over a reopened store: a restart.
func (f *fixture) reopen(t *testing.T, timeout time.Duration) {
	t.Helper()
	if f.store != nil {
		require.NoError(t, f.store.Close())
	}
	f.store = openStore(t, f.dbPath)
	e := Entry{ACP: []string{"fake-agent"}, Timeout: timeout.String()}
	require.Nil(t, e.Check("coder"))
	e.RunTimeout = timeout // tests go under the 10s floor of the config
	f.sup = New(Options{Entries: map[string]Entry{"coder": e}, Runners: map[string]Runner{"coder": f.runner},
		KV: storeKV{f.store}, DataDir: f.dataDir, Notify: f.notes.add})
	f.tool = f.sup.Tool(f.ws)
}

func (f *fixture) call(t *testing.T, args Args) runtime.Result {
	t.Helper()
	return f.callCtx(t, context.Background(), args)
}

func (f *fixture) callCtx(t *testing.T, ctx context.Context, args Args) runtime.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	res, err := f.tool.Run(runtimeCall(ctx), raw)
	require.NoError(t, err)
	return res
}

// runtimeCall is ctx as the loop gives it to a call of agent boss.
func runtimeCall(ctx context.Context) context.Context {
	return runtime.WithCall(ctx, runtime.CallInfo{SessionID: "sess-a", Agent: "boss", CallID: "call-1"})
}

func (f *fixture) write(t *testing.T, name, content string) {
	t.Helper()
	p := filepath.Join(f.ws, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func (f *fixture) read(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.ws, name))
	require.NoError(t, err)
	return string(data)
}

func recordOf(t *testing.T, res runtime.Result) *Record {
	t.Helper()
	var r Record
	require.NoError(t, json.Unmarshal(res.Details, &r), res.Content)
	return &r
}
