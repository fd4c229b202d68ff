package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// appendTool appends a line to <dir>/effects, says so on stdout, then
// blocks until its call is cancelled: a tool with an effect, caught
// mid-call by a kill.
type appendTool struct{ dir string }

func (a appendTool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "append", Description: "append a line", Schema: []byte(`{"type":"object"}`)}
}

func (a appendTool) Run(ctx context.Context, _ []byte) (runtime.Result, error) {
	f, err := os.OpenFile(filepath.Join(a.dir, "effects"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return runtime.Result{}, err
	}
	_, err = f.WriteString("ran\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	fmt.Println("appended")
	<-ctx.Done()
	return runtime.Result{Content: "appended"}, err
}

// A turn killed while a tool ran: on restart the call is not run again;
// the model gets a result saying its effect is unknown, and the turn goes
// on from there.
func TestCrash_ResumedTurnNeverRerunsATool(t *testing.T) {
	testenv.SkipIfNoReexec(t, "re-executes the test binary as the child it kills")
	seen := make(chan llmtest.RecordedRequest, 1)
	release := make(chan struct{})
	echo := llmtest.Echo()
	fake := llmtest.NewHandler(t, llmtest.Ollama, func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.Last().Role == "tool" {
			seen <- r
			<-release
		}
		return echo(r)
	})
	dir := t.TempDir()
	sid := killChild(t, "resume", dir, fake.BaseURL(), 1, "appended")

	st, loop, ctx, stop := resumed(t, "resume", dir, fake.BaseURL())
	var req llmtest.RecordedRequest
	select {
	case req = <-seen:
	case <-ctx.Done():
		t.Fatal("the resumed turn never went back to the model")
	}
	sub, err := loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	close(release)
	evs := collect(ctx, t, sub)
	stop()

	effects, err := os.ReadFile(filepath.Join(dir, "effects"))
	require.NoError(t, err)
	assert.Equal(t, "ran\n", string(effects), "the interrupted call ran once, and was not run again")
	assert.Contains(t, req.Last().Content, "interrupted by a restart; its effect is unknown")
	ends := find(evs, runtime.EvTurnEnd)
	require.Len(t, ends, 1)
	assert.Equal(t, runtime.TurnCompleted, ends[0].Reason)
	var results []runtime.Event
	require.NoError(t, runtime.ReadEvents(st, sid, 0, func(e runtime.Event) error {
		if e.Type == runtime.EvToolResult {
			results = append(results, e)
		}
		return nil
	}))
	require.Len(t, results, 1, "the synthesized result is durable")
	assert.False(t, results[0].Success)
	assert.Contains(t, results[0].Content, "check before repeating it")
}
