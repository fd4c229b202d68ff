package runtime_test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// The daemon is killed while a parent waits on two children whose model
// calls run. After the restart the wait resumes, the children (a continue
// agent) go on, no child is spawned twice, and the parent's answer has
// both children's results.
func TestCrash_SubagentWaitSurvivesSIGKILL(t *testing.T) {
	testenv.SkipIfNoReexec(t, "re-executes the test binary as the child it kills")
	started := make(chan string, 8)
	release := make(chan struct{})
	fake := llmtest.NewHandler(t, llmtest.Ollama, delegator(func(task string) {
		started <- task
		<-release
	}))
	dir := t.TempDir()

	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashCaseEnv+"=subagents", crashDirEnv+"="+dir, crashBaseEnv+"="+fake.BaseURL())
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	require.True(t, sc.Scan())
	sid, ok := strings.CutPrefix(sc.Text(), "session ")
	require.True(t, ok, sc.Text())
	before := map[string]bool{<-started: true, <-started: true} // both children call their model: the parent waits
	assert.Equal(t, map[string]bool{"alpha": true, "beta": true}, before)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	st, loop, ctx, stop := resumed(t, "subagents", dir, fake.BaseURL())
	after := map[string]bool{<-started: true, <-started: true} // the children go on
	assert.Equal(t, before, after)
	sub, err := loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	stats, err := loop.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, stats.Parked, "the resumed wait holds no slot")
	close(release)
	evs := collect(ctx, t, sub)
	stop()

	require.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	final := find(evs, runtime.EvAssistant)
	answer := final[len(final)-1].Content
	assert.Contains(t, answer, "answer to alpha")
	assert.Contains(t, answer, "answer to beta")
	list, err := runtime.ListSessions(st)
	require.NoError(t, err)
	children := 0
	for _, s := range list {
		if s.Parent == sid {
			children++
		}
	}
	assert.Equal(t, 2, children, "no child spawned twice")
}
