package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// stepTool appends a line to <dir>/effects and says so on stdout; its
// second call then blocks until cancelled, to be caught by a kill.
type stepTool struct{ dir string }

func (s stepTool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "step", Description: "take a step", Schema: []byte(`{"type":"object"}`)}
}

func (s stepTool) Run(ctx context.Context, _ []byte) (runtime.Result, error) {
	path := filepath.Join(s.dir, "effects")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return runtime.Result{}, err
	}
	_, err = f.WriteString("step\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	data, _ := os.ReadFile(path)
	fmt.Println("stepped")
	if strings.Count(string(data), "\n") == 2 {
		<-ctx.Done()
	}
	return runtime.Result{Content: "stepped"}, err
}

// A turn killed in its second tool round of three: after the restart it
// gets one more round with tools, then the last call without, as if it
// had not stopped. The count comes from the log, not from memory.
func TestCrash_ResumedTurnKeepsCountingRounds(t *testing.T) {
	testenv.SkipIfNoReexec(t, "re-executes the test binary as the child it kills")
	release, open := latch()
	fake := llmtest.NewHandler(t, llmtest.Ollama, func(r llmtest.RecordedRequest) llmtest.Reply {
		if len(r.Tools) == 0 {
			<-release // until the test watches
			return llmtest.Reply{Text: "took the steps I could"}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "step", Arguments: `{}`}}}
	})
	t.Cleanup(open) // after the fake's: runs before it
	dir := t.TempDir()
	sid := killChild(t, "rounds", dir, fake.BaseURL(), 2, "stepped")
	require.Len(t, fake.Requests(), 2, "two rounds before the kill")

	_, loop, ctx, stop := resumed(t, "rounds", dir, fake.BaseURL())
	sub, err := loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	open()
	evs := collect(ctx, t, sub)
	stop()

	reqs := fake.Requests()
	require.Len(t, reqs, 4, "one more round with tools, then the last call without")
	assert.NotEmpty(t, reqs[2].Tools)
	assert.Empty(t, reqs[3].Tools)
	effects, err := os.ReadFile(filepath.Join(dir, "effects"))
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(effects), "\n"), "the interrupted call is not run again")
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	assert.Equal(t, runtime.CodeToolLimit, evs[len(evs)-2].Code)
}
