package workers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// progressRec records progress lines and calls on with each.
type progressRec struct {
	mu    sync.Mutex
	lines []string
	on    func(string)
}

func (p *progressRec) add(_ context.Context, s string) {
	p.mu.Lock()
	p.lines = append(p.lines, s)
	on := p.on
	p.mu.Unlock()
	if on != nil {
		on(s)
	}
}

func (p *progressRec) all() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

func noAsk(context.Context, []runtime.Question) (string, error) {
	return "", errors.New("no one to ask")
}

func acpRunner(t *testing.T, home string, argv ...string) (*ACPRunner, *progressRec) {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	r := NewACPRunner(RunnerConfig{Name: "tester", Argv: append([]string{testAgent(t)}, argv...), Sandbox: trusted, Home: home})
	rec := &progressRec{}
	r.ask, r.progress = noAsk, rec.add
	return r, rec
}

func TestACPRunner_Prompt(t *testing.T) {
	r, rec := acpRunner(t, "")
	out, err := r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "say thinking first\ntool Look around\nsay hello there world"})
	require.NoError(t, err)
	assert.Equal(t, "hello there world", out.Text, "the text after the last tool call is the final message")
	assert.Equal(t, "end_turn", out.Stop)
	assert.True(t, strings.HasPrefix(out.SessionID, "s-"), out.SessionID)
	assert.Contains(t, rec.all(), "read: Look around")
}

func TestACPRunner_Permission(t *testing.T) {
	for _, tc := range []struct {
		name     string
		decision string
		err      error
		want     string
	}{
		{"allow once", runtime.AllowOnce, nil, "picked yes"},
		{"allow always", runtime.AllowAlways, nil, "picked always"},
		{"deny", runtime.DenyCall, nil, "picked no"},
		{"ask fails", "", errors.New("no loop"), "picked no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := acpRunner(t, "")
			var asked []runtime.Question
			r.ask = func(_ context.Context, qs []runtime.Question) (string, error) {
				asked = append(asked, qs...)
				return tc.decision, tc.err
			}
			out, err := r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "exec go test ./..."})
			require.NoError(t, err)
			assert.Equal(t, tc.want, out.Text)
			assert.Equal(t, []runtime.Question{{Tool: "bash", Subject: "go test ./..."}}, asked)
		})
	}
}

// Over the wire: a worker's request that says "read" but runs rm is
// judged as the command, and the policy's deny of bash:rm* wins.
func TestACPRunner_PermissionJudgedByWhatItDoes(t *testing.T) {
	rm, err := agents.ParseRule("bash:rm*")
	require.NoError(t, err)
	policy := &agents.Policy{Mode: "dangerous", Deny: []agents.Rule{rm}}
	r, rec := acpRunner(t, "")
	var asked []runtime.Question
	r.ask = func(_ context.Context, qs []runtime.Question) (string, error) {
		asked = append(asked, qs...)
		return judge(policy, qs), nil
	}
	dir := t.TempDir()
	out, err := r.Run(t.Context(), Job{Dir: dir, Prompt: "sneak rm -rf ~"})
	require.NoError(t, err)
	assert.Equal(t, "picked no", out.Text)
	assert.Equal(t, []runtime.Question{{Tool: "bash", Subject: "rm -rf ~"}, {Tool: "read_file", Subject: "notes.txt"}}, asked)
	assert.Contains(t, rec.all(), "asking: bash rm -rf ~", "progress names the worst reading")

	out, err = r.Run(t.Context(), Job{Dir: dir, Prompt: "exec ls"})
	require.NoError(t, err)
	assert.Equal(t, "picked yes", out.Text, "what the policy allows still runs")
}

func TestACPRunner_Files(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in.txt"), []byte("one\ntwo\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	r, _ := acpRunner(t, "")
	for _, tc := range []struct{ prompt, want string }{
		{"write " + dir + "/sub/a.txt hi", "wrote " + dir + "/sub/a.txt"},
		{"read " + dir + "/in.txt", "read one\ntwo\n"},
		{"write " + outside + "/x.txt no", "write refused"},
		{"write " + dir + "/../x.txt no", "write refused"},
		{"write " + dir + "/out/x.txt no", "write refused"},
		{"read " + dir + "/out/x.txt", "read refused"},
		{"write sub/rel.txt no", "write refused"},
	} {
		out, err := r.Run(t.Context(), Job{Dir: dir, Prompt: tc.prompt})
		require.NoError(t, err, tc.prompt)
		assert.True(t, strings.HasPrefix(out.Text, tc.want), "%s: %q", tc.prompt, out.Text)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sub", "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hi", string(b))
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written outside the folder")
	_, err = os.Stat(filepath.Join(filepath.Dir(dir), "x.txt"))
	assert.True(t, os.IsNotExist(err))
}

func TestACPRunner_Resume(t *testing.T) {
	home := t.TempDir()
	r, _ := acpRunner(t, home)
	first, err := r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "say one"})
	require.NoError(t, err)
	again, err := r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "say two", Resume: first.SessionID})
	require.NoError(t, err)
	assert.Equal(t, first.SessionID, again.SessionID)
	assert.Equal(t, "two", again.Text, "the replayed history is not part of the answer")

	r, _ = acpRunner(t, home, "--no-load")
	fresh, err := r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "say three", Resume: first.SessionID})
	require.NoError(t, err)
	assert.NotEqual(t, first.SessionID, fresh.SessionID)
	assert.True(t, strings.HasPrefix(fresh.Text, "[could not resume session "+first.SessionID), fresh.Text)
	assert.True(t, strings.HasSuffix(fresh.Text, "three"), fresh.Text)

	r, _ = acpRunner(t, t.TempDir())
	lost, err := r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "say four", Resume: "s-gone"})
	require.NoError(t, err)
	assert.Contains(t, lost.Text, "[could not resume session s-gone")
}

func TestACPRunner_Cancel(t *testing.T) {
	for _, tc := range []struct{ name, prompt string }{
		{"agent ends its turn", "hang"},
		{"agent ignores the cancel", "deaf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, rec := acpRunner(t, "")
			r.grace = 200 * time.Millisecond
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			rec.on = func(s string) {
				if strings.Contains(s, "waiting") {
					cancel()
				}
			}
			out, err := r.Run(ctx, Job{Dir: t.TempDir(), Prompt: tc.prompt})
			require.Error(t, err)
			assert.Equal(t, `worker "tester" was cancelled before it finished`, err.Error())
			assert.Equal(t, "cancelled", out.Stop)
			assert.NotEmpty(t, out.SessionID, "a cancelled worker can be resumed")
		})
	}
}

// A worker past its timeout is killed with everything it started.
func TestACPRunner_Timeout(t *testing.T) {
	home := t.TempDir()
	r, _ := acpRunner(t, home)
	out, err := r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "deaf", Timeout: 2 * time.Second})
	require.Error(t, err)
	assert.Equal(t, "the worker did not finish within 2s: raise timeout in its workers: entry or give it a smaller task", err.Error())
	assert.Equal(t, "error", out.Stop)
	b, err := os.ReadFile(filepath.Join(home, "pids"))
	require.NoError(t, err, "the agent got as far as starting its child")
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		assertGone(t, pid)
	}
}

// assertGone checks that process pid has ended (a zombie counts), or
// ends within seconds, told by its pidfd rather than by polling.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	require.NoError(t, err)
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 10_000)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "process %d still runs", pid)
}

func TestACPRunner_Garbage(t *testing.T) {
	for _, tc := range []struct{ prompt, want string }{
		{"garbage", `wrote "this is not json", which is not a JSON-RPC message`},
		{"huge", "wrote a line longer than 4 MiB"},
	} {
		r, _ := acpRunner(t, "")
		_, err := r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: tc.prompt})
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		assert.Contains(t, err.Error(), "check that its acp: command starts an ACP agent on stdio")
	}
}

func TestACPRunner_NotAnAgent(t *testing.T) {
	r := NewACPRunner(RunnerConfig{Name: "tester", Argv: []string{"/bin/sh", "-c", "echo broken >&2; exit 3"}, Sandbox: trusted})
	r.ask, r.progress = noAsk, func(context.Context, string) {}
	_, err := r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "hi"})
	require.Error(t, err)
	assert.Equal(t, `worker "tester" ended before it finished (it said: broken): check its acp: command and env`, err.Error())

	_, err = r.Run(t.Context(), Job{Dir: "relative", Prompt: "hi"})
	assert.EqualError(t, err, `the worker's folder "relative" is not an absolute path: give it one`)
}
