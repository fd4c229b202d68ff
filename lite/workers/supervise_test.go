package workers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A first result rejected with feedback, a retry that resumes the
// worker's session with that feedback, approved: only then does the
// workspace change, and the job keeps both attempts.
func TestSupervisor_RejectThenApprove(t *testing.T) {
	f := newFixture(t, time.Minute,
		writes("w-sess-1", "I fixed the greeting.", map[string]string{"greet.txt": "helo\n"}),
		writes("w-sess-1", "Fixed the typo and added a test.", map[string]string{"greet.txt": "hello world\n", "greet_test.txt": "ok\n"}))
	f.write(t, "greet.txt", "hello\n")

	res := f.call(t, Args{Action: "run", Worker: "coder", Task: "make the greeting say hello world"})
	require.False(t, res.IsError, res.Content)
	rec := recordOf(t, res)
	assert.Equal(t, StatusReview, rec.Status)
	assert.Contains(t, res.Content, "attempt 1 of 3")
	assert.Contains(t, res.Content, "I fixed the greeting.")
	assert.Contains(t, res.Content, "-hello\n+helo\n")
	assert.Contains(t, res.Content, "Call worker with action approve")
	assert.Equal(t, "hello\n", f.read(t, "greet.txt"), "nothing reaches the workspace before approval")

	res = f.call(t, Args{Action: "reject", Job: rec.ID, Feedback: "It must say hello world, and add a test."})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "attempt 2 of 3")
	assert.Contains(t, res.Content, "+hello world\n")
	assert.Contains(t, res.Content, "--- /dev/null\n+++ b/greet_test.txt\n")
	jobs := f.runner.got()
	require.Len(t, jobs, 2)
	assert.Equal(t, "", jobs[0].Resume)
	assert.Equal(t, "w-sess-1", jobs[1].Resume, "the retry resumes the worker's own session")
	assert.Equal(t, "It must say hello world, and add a test.", jobs[1].Prompt)
	assert.Equal(t, jobs[0].Dir, jobs[1].Dir, "the retry works in the same staging")
	assert.Equal(t, "hello\n", f.read(t, "greet.txt"))

	res = f.call(t, Args{Action: "approve", Job: rec.ID})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "1 changed, 1 added, 0 deleted")
	assert.Equal(t, "hello world\n", f.read(t, "greet.txt"))
	assert.Equal(t, "ok\n", f.read(t, "greet_test.txt"))
	rec = recordOf(t, res)
	assert.Equal(t, StatusApproved, rec.Status)
	require.Len(t, rec.Attempts, 2)
	assert.Equal(t, "make the greeting say hello world", rec.Attempts[0].Prompt)
	assert.Equal(t, "I fixed the greeting.", rec.Attempts[0].Result)
	assert.Equal(t, "It must say hello world, and add a test.", rec.Attempts[1].Prompt)
	assert.NoDirExists(t, rec.Dir, "the staging goes once the job ends")
	notes := f.notes.all()
	require.Len(t, notes, 1)
	assert.Equal(t, "sess-a", notes[0].Session)
	assert.Contains(t, notes[0].Title, "approved")

	res = f.call(t, Args{Action: "approve", Job: rec.ID})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "is approved, not awaiting review")
}

// A worker that hangs is stopped at its timeout: the job fails, nothing
// reaches the workspace, the user is told. Fake time: no sleeps.
func TestSupervisor_HangingWorkerTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stopped := make(chan struct{})
		hang := func(ctx context.Context, job Job) (Outcome, error) {
			require.NoError(t, os.WriteFile(filepath.Join(job.Dir, "half.txt"), []byte("half"), 0o644))
			<-ctx.Done() // a real runner kills the worker's process tree here
			close(stopped)
			return Outcome{Stop: "cancelled"}, errors.New("the worker was killed: its run ended")
		}
		f := newFixture(t, time.Minute, hang)
		f.write(t, "a.txt", "a\n")
		start := time.Now()
		res := f.call(t, Args{Action: "run", Worker: "coder", Task: "loop forever"})
		<-stopped
		assert.True(t, res.IsError)
		assert.Contains(t, res.Content, "did not finish within 1m0s and was stopped")
		assert.GreaterOrEqual(t, time.Since(start), time.Minute)
		rec := recordOf(t, res)
		assert.Equal(t, StatusFailed, rec.Status)
		assert.Contains(t, rec.Attempts[0].Error, "did not finish within 1m0s")
		assert.NoDirExists(t, rec.Dir)
		assert.NoFileExists(t, filepath.Join(f.ws, "half.txt"))
		notes := f.notes.all()
		require.Len(t, notes, 1)
		assert.Contains(t, notes[0].Title, "failed")
		assert.Contains(t, notes[0].Text, "did not finish within 1m0s")
	})
}

// Approve refuses when a file the worker changed was changed in the
// workspace meanwhile, and applies nothing.
func TestSupervisor_ApproveRefusedWhenWorkspaceChanged(t *testing.T) {
	f := newFixture(t, time.Minute, writes("s", "done", map[string]string{"a.txt": "worker\n", "new.txt": "n\n"}))
	f.write(t, "a.txt", "base\n")
	res := f.call(t, Args{Action: "run", Worker: "coder", Task: "edit a"})
	require.False(t, res.IsError, res.Content)
	id := recordOf(t, res).ID
	f.write(t, "a.txt", "someone else\n")

	res = f.call(t, Args{Action: "approve", Job: id})
	assert.True(t, res.IsError)
	assert.Equal(t, "a.txt changed in the workspace since the worker started: run the worker again", res.Content)
	assert.Equal(t, "someone else\n", f.read(t, "a.txt"))
	assert.NoFileExists(t, filepath.Join(f.ws, "new.txt"))
	res = f.call(t, Args{Action: "status", Job: id})
	assert.Contains(t, res.Content, "status awaiting_review")
}

// A job awaiting review survives a restart (the store reopened, a new
// supervisor) and can be approved; a job left running by the daemon that
// died is interrupted and can be run again by rejecting it.
func TestSupervisor_Restart(t *testing.T) {
	f := newFixture(t, time.Minute,
		writes("s1", "done", map[string]string{"a.txt": "worker\n"}),
		writes("s2", "again", map[string]string{"b.txt": "b\n"}))
	f.write(t, "a.txt", "base\n")
	res := f.call(t, Args{Action: "run", Worker: "coder", Task: "edit a"})
	require.False(t, res.IsError, res.Content)
	id := recordOf(t, res).ID

	f.reopen(t, time.Minute)
	res = f.call(t, Args{Action: "list"})
	assert.Contains(t, res.Content, id+" worker=coder status=awaiting_review attempts=1/3")
	res = f.call(t, Args{Action: "approve", Job: id})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "worker\n", f.read(t, "a.txt"))

	// A record left running, as by a daemon killed mid-run.
	rec := &Record{ID: newJobID(time.Now()), Worker: "coder", Agent: "boss", Session: "sess-a", Workspace: f.ws,
		Dir: filepath.Join(f.dataDir, "workers", "x"), MaxAttempts: 3, Status: StatusRunning,
		Attempts: []Attempt{{N: 1, Prompt: "edit b", Started: time.Now()}}}
	rec.Dir = filepath.Join(f.dataDir, "workers", rec.ID)
	_, err := stage(context.Background(), f.ws, filepath.Join(rec.Dir, "work"), Limits{}.withDefaults(), nil)
	require.NoError(t, err)
	st, err := stage(context.Background(), f.ws, filepath.Join(t.TempDir(), "w"), Limits{}.withDefaults(), nil)
	require.NoError(t, err)
	require.NoError(t, saveManifest(rec.Dir, st.base))
	require.NoError(t, f.sup.create(context.Background(), rec))
	f.reopen(t, time.Minute)
	res = f.call(t, Args{Action: "status", Job: rec.ID})
	assert.Contains(t, res.Content, "status interrupted")
	res = f.call(t, Args{Action: "reject", Job: rec.ID, Feedback: "go on"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "attempt 2 of 3")
	jobs := f.runner.got()
	assert.Equal(t, "edit b\n\nFeedback on an earlier try: go on", jobs[1].Prompt, "no worker session known: the task again")
}

func TestSupervisor_Refusals(t *testing.T) {
	f := newFixture(t, time.Minute)
	for _, tc := range []struct {
		args Args
		want string
	}{
		{Args{Action: "run", Worker: "nope", Task: "x"}, `there is no worker "nope": use one of coder`},
		{Args{Action: "approve", Job: "../../etc"}, `job "../../etc" is not a job id: use one that run or list gave`},
		{Args{Action: "approve", Job: "0123456789abcdef0123"}, "there is no job 0123456789abcdef0123 of this agent"},
		{Args{Action: "fly"}, `action "fly" is not one of run, approve, reject, status, list`},
		{Args{Action: "reject", Job: "0123456789abcdef0123"}, "feedback is required"},
	} {
		res := f.call(t, tc.args)
		assert.True(t, res.IsError, tc.args)
		assert.Contains(t, res.Content, tc.want)
	}
	res := f.call(t, Args{Action: "list"})
	assert.Equal(t, "No worker jobs yet. Workers: coder.", res.Content)
}

// With no retries left, reject ends the job: rejected, staging gone,
// the user told; retry false does the same while retries remain.
func TestSupervisor_RejectForGood(t *testing.T) {
	f := newFixture(t, time.Minute,
		writes("s1", "one", map[string]string{"a.txt": "1\n"}),
		writes("s1", "two", map[string]string{"a.txt": "2\n"}),
		writes("s1", "three", map[string]string{"a.txt": "3\n"}),
		writes("s2", "other", map[string]string{"b.txt": "b\n"}))
	res := f.call(t, Args{Action: "run", Worker: "coder", Task: "t"})
	id := recordOf(t, res).ID
	for i := 0; i < 2; i++ {
		res = f.call(t, Args{Action: "reject", Job: id, Feedback: "again"})
		require.False(t, res.IsError, res.Content)
	}
	assert.Contains(t, res.Content, "attempt 3 of 3")
	assert.Contains(t, res.Content, "to discard them (no retries left)")
	res = f.call(t, Args{Action: "reject", Job: id, Feedback: "still wrong"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "Job "+id+" rejected: no retries left after 3 attempts; nothing reached the workspace.", res.Content)
	rec := recordOf(t, res)
	assert.Equal(t, StatusRejected, rec.Status)
	assert.NoDirExists(t, rec.Dir)
	assert.NoFileExists(t, filepath.Join(f.ws, "a.txt"))

	res = f.call(t, Args{Action: "run", Worker: "coder", Task: "t2"})
	id2 := recordOf(t, res).ID
	no := false
	res = f.call(t, Args{Action: "reject", Job: id2, Retry: &no})
	assert.Equal(t, "Job "+id2+" rejected after 1 attempt(s); nothing reached the workspace.", res.Content)
	assert.Len(t, f.runner.got(), 4, "retry false runs nothing")
	notes := f.notes.all()
	require.Len(t, notes, 2)
	assert.Contains(t, notes[0].Title, "rejected")
}

// A run whose call ends (the turn cancelled, the daemon stopping) is
// interrupted: its staging is kept and reject with feedback runs the
// worker again there, resuming its session when it had one.
func TestSupervisor_CallCancelledInterrupts(t *testing.T) {
	started := make(chan struct{})
	block := func(ctx context.Context, job Job) (Outcome, error) {
		require.NoError(t, os.WriteFile(filepath.Join(job.Dir, "part.txt"), []byte("part\n"), 0o644))
		close(started)
		<-ctx.Done()
		return Outcome{SessionID: "w9", Stop: "cancelled"}, errors.New("the worker was stopped: its call ended")
	}
	f := newFixture(t, time.Hour, block, writes("w9", "finished", map[string]string{"rest.txt": "rest\n"}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res := f.callCtx(t, ctx, Args{Action: "run", Worker: "coder", Task: "long work"})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "was interrupted before the worker finished: call worker with action reject")
	ids := f.call(t, Args{Action: "list"}).Content
	assert.Contains(t, ids, "status=interrupted attempts=1/3")
	id := ids[:20]
	res = f.call(t, Args{Action: "reject", Job: id, Feedback: "finish it"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "+++ b/part.txt", "the staging was kept")
	assert.Contains(t, res.Content, "+++ b/rest.txt")
	jobs := f.runner.got()
	assert.Equal(t, "w9", jobs[1].Resume)
	assert.Empty(t, f.notes.all(), "an interruption is no end: nobody is told yet")
}

// One worker runs at a time by default: a second run is refused while
// the first works, in one sentence, and goes once it is done.
func TestSupervisor_MaxRunning(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	slow := func(ctx context.Context, job Job) (Outcome, error) {
		close(started)
		<-release
		return Outcome{SessionID: "s", Text: "ok", Stop: "end_turn"}, nil
	}
	f := newFixture(t, time.Minute, slow, writes("s2", "ok", nil))
	done := make(chan struct{})
	go func() {
		defer close(done)
		raw := []byte(`{"action":"run","worker":"coder","task":"first"}`)
		_, _ = f.tool.Run(runtimeCall(context.Background()), raw)
	}()
	<-started
	res := f.call(t, Args{Action: "run", Worker: "coder", Task: "second"})
	assert.True(t, res.IsError)
	assert.Equal(t, "1 worker(s) already running, the most at once: wait for one to finish, then try again", res.Content)
	close(release)
	<-done
	res = f.call(t, Args{Action: "run", Worker: "coder", Task: "second"})
	assert.False(t, res.IsError, res.Content)
}

// A call whose workspace is read-only (a subagent given its parent's)
// may run a worker and read its diff, never apply it.
func TestSupervisor_ReadOnlyCallCannotApprove(t *testing.T) {
	f := newFixture(t, time.Minute, writes("s", "ok", map[string]string{"a.txt": "new\n"}))
	res := f.call(t, Args{Action: "run", Worker: "coder", Task: "t"})
	require.False(t, res.IsError, res.Content)
	ctx := runtime.WithCall(context.Background(), runtime.CallInfo{SessionID: "child", Agent: "boss", CallID: "c",
		Workspace: f.ws, ReadOnly: true})
	res, err := f.tool.Run(ctx, []byte(`{"action":"approve","job":"`+recordOf(t, res).ID+`"}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "this session's workspace is read-only")
	assert.NoFileExists(t, filepath.Join(f.ws, "a.txt"))
}
