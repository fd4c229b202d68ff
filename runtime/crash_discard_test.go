package runtime_test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// A process killed while a session's first message waits for the model:
// the message was durable before the model was called, so it survives the
// crash; the resumed turn (a continue agent) fails on a missing model,
// and the front's DiscardUnanswered then removes the session as it does
// when no crash came between.
func TestCrash_UnansweredFirstTurn(t *testing.T) {
	testenv.SkipIfNoReexec(t, "re-executes the test binary as the child it kills")
	asked := make(chan struct{})
	var first sync.Once
	fake := llmtest.NewHandler(t, llmtest.Ollama, func(llmtest.RecordedRequest) llmtest.Reply {
		child := false
		first.Do(func() { child = true })
		if child { // it never answers
			close(asked)
			return llmtest.Reply{Text: "never", Fault: llmtest.Stall}
		}
		return llmtest.Reply{Status: 404, ErrorMessage: `model "m" not found, try pulling it first`}
	})
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashCaseEnv+"=unanswered", crashDirEnv+"="+dir, crashBaseEnv+"="+fake.BaseURL())
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	require.True(t, sc.Scan(), "the child says its session")
	sid, ok := strings.CutPrefix(sc.Text(), "session ")
	require.True(t, ok, sc.Text())
	<-asked // the model is called only once the message is committed
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	st, loop, ctx, stop := resumed(t, "unanswered", dir, fake.BaseURL())
	defer stop()
	sub, err := loop.Follow(ctx, sid, 0)
	require.NoError(t, err)
	var users []string
	var end runtime.Event
	for end.Type != runtime.EvTurnEnd {
		select {
		case e, open := <-sub.C():
			require.True(t, open, "the session went before its turn ended")
			if e.Type == runtime.EvUserMessage {
				users = append(users, e.Content)
			}
			if e.Type == runtime.EvTurnEnd {
				end = e
			}
		case <-ctx.Done():
			t.Fatal("the resumed turn never ended")
		}
	}
	sub.Close()
	assert.Equal(t, []string{"hello"}, users, "the message survived the kill")
	assert.Equal(t, runtime.TurnFailed, end.Reason)

	gone, err := loop.DiscardUnanswered(ctx, sid)
	require.NoError(t, err)
	assert.True(t, gone)
	_, err = runtime.ReadSession(st, sid)
	assert.ErrorIs(t, err, runtime.ErrSessionNotFound)
}
