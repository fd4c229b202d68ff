package workers

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const crashEnv = "AGNX_WORKERS_CRASH_DIR"

// TestCrashWorkerChild is the killed daemon's side: it starts a job
// whose worker edits a file, says so on stdout and waits to be killed.
func TestCrashWorkerChild(t *testing.T) {
	root := os.Getenv(crashEnv)
	if root == "" {
		t.Skip("runs only as the crash test's child")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	st, err := openStoreSynced(filepath.Join(root, "data", "agnx.db"))
	require.NoError(t, err)
	hang := func(ctx context.Context, job Job) (Outcome, error) {
		require.NoError(t, os.WriteFile(filepath.Join(job.Dir, "half.txt"), []byte("half\n"), 0o644))
		os.Stdout.WriteString("started\n")
		<-ctx.Done()
		return Outcome{}, ctx.Err()
	}
	f := &fixture{runner: &scriptRunner{steps: []func(context.Context, Job) (Outcome, error){hang}}, notes: &notices{},
		ws: filepath.Join(root, "ws"), dataDir: filepath.Join(root, "data"), store: st}
	f.sup = New(Options{Entries: map[string]Entry{"coder": {RunTimeout: time.Hour, Retries: 2}}, Runners: map[string]Runner{"coder": f.runner},
		KV: storeKV{st}, DataDir: f.dataDir})
	f.tool = f.sup.Tool(f.ws)
	f.callCtx(t, ctx, Args{Action: "run", Worker: "coder", Task: "edit half"})
}

// A daemon SIGKILLed while its worker runs leaves a job that the next
// daemon finds interrupted, its staging (with the worker's edit) kept;
// reject with feedback runs the worker there again.
func TestSupervisor_KilledMidRun(t *testing.T) {
	f := newFixture(t, time.Minute, writes("w2", "finished", map[string]string{"rest.txt": "rest\n"}))
	f.write(t, "a.txt", "a\n")
	require.NoError(t, f.store.Close())
	root := filepath.Dir(f.ws)

	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWorkerChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+root)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the child never started its worker")
	require.Equal(t, "started\n", line)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	f.store = nil
	f.reopen(t, time.Minute)
	list := f.call(t, Args{Action: "list"}).Content
	require.Contains(t, list, "status=interrupted attempts=1/3", "the job found running is interrupted")
	id := list[:20]
	assert.FileExists(t, filepath.Join(f.dataDir, "workers", id, "work", "half.txt"), "the staging is kept")
	res := f.call(t, Args{Action: "reject", Job: id, Feedback: "finish it"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "+++ b/half.txt")
	assert.Contains(t, res.Content, "+++ b/rest.txt")
	assert.Equal(t, "edit half\n\nFeedback on an earlier try: finish it", f.runner.got()[0].Prompt,
		"the killed run never said its session: the task again, with the feedback")
}
