package lite

import (
	"context"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
	"github.com/agnx-lite/agnx-lite/lite/workers"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// editRunner is a worker that writes its task into done.txt of the folder
// it works in, as a coding agent edits files.
type editRunner struct{}

func (editRunner) Run(_ context.Context, job workers.Job) (workers.Outcome, error) {
	err := os.WriteFile(filepath.Join(job.Dir, "done.txt"), []byte(job.Prompt+"\n"), 0o644)
	return workers.Outcome{SessionID: "w1", Text: "wrote done.txt", Stop: "end_turn"}, err
}

// The worker tool end to end in a daemon: the agent lists it, runs a
// worker, reads the diff, approves; the workspace gets the file and the
// user is told through the agent's spec.notify.
func TestWorkerTool_EndToEnd(t *testing.T) {
	fakeRunner := func(o *toolset.Options, so *toolset.SupervisorOptions) {
		so.NewRunner = func(*sandbox.Manager, *config.Config, string, workers.Entry) (workers.Runner, error) {
			return editRunner{}, nil
		}
	}
	jobID := regexp.MustCompile(`Job ([0-9a-f]{20}) `)
	var mu sync.Mutex // the fake answers on its server's goroutines
	var results []string
	fake := llmtest.NewHandler(t, llmtest.Ollama, func(r llmtest.RecordedRequest) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		last := r.Last()
		if last.Role != "tool" {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "worker",
				Arguments: `{"action":"run","worker":"coder","task":"say hi"}`}}}
		}
		results = append(results, last.Content)
		if m := jobID.FindStringSubmatch(last.Content); m != nil && len(results) == 1 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c2", Name: "worker",
				Arguments: `{"action":"approve","job":"` + m[1] + `"}`}}}
		}
		return llmtest.Reply{Text: "done"}
	})
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	url, got := sink(t)
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Workers = map[string]workers.Entry{"coder": {Claude: "claude"}}
	require.NoError(t, cfg.Validate())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	setSpec(t, filepath.Join(cfg.AgentsDir, "assistant"), "  tools:\n    - {type: builtin, name: worker}\n"+
		"  notify:\n    deliveries:\n      - {type: webhook, url: "+url+"/hook}\n")
	app, err := Open(cfg, &Options{notifyLoopback: true, tools: fakeRunner})
	require.NoError(t, err)
	defer app.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	info, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant"})
	require.NoError(t, err)
	sub, err := app.Loop.Subscribe(ctx, info.ID)
	require.NoError(t, err)
	defer sub.Close()
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "go"})
	require.NoError(t, err)
	var hook posted
	select {
	case hook = <-got:
	case <-ctx.Done():
		t.Fatal("no notification came")
	}
	var progress []string
	for done := false; !done; {
		select {
		case e := <-sub.C():
			if e.Type == runtime.EvToolProgress {
				progress = append(progress, e.ToolName+": "+e.Content)
			}
			done = e.Type == runtime.EvAssistant && e.Content == "done"
		case <-ctx.Done():
			t.Fatal("the turn did not end")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, progress, "worker: copying the workspace for worker coder", "the run's progress reaches followers")
	assert.Contains(t, hook.body, `"origin":"worker:`)
	assert.Contains(t, hook.body, "approved")
	require.Len(t, results, 2)
	assert.Contains(t, results[0], "+++ b/done.txt\n@@ -0,0 +1,1 @@\n+say hi\n")
	assert.Contains(t, results[1], "approved: 0 changed, 1 added, 0 deleted applied to the workspace (done.txt)")
	a, err := app.Agents.LoadAgent("assistant")
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(a.Spec.Workspace, "done.txt"))
	require.NoError(t, err)
	assert.Equal(t, "say hi\n", string(data))
}
