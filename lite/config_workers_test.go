package lite

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/workers"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

func TestParseConfig_Workers(t *testing.T) {
	t.Setenv("WORKER_TOKEN", "tok-123")
	c, err := ParseConfig("agnx.yaml", []byte(`workers:
  claude:
    acp: [claude-code-acp, --verbose]
    env: {ANTHROPIC_API_KEY: "${WORKER_TOKEN}"}
  claude-headless:
    claude: /usr/local/bin/claude
    args: [--model, sonnet]
    network: true
    timeout: 2h
    max_retries: 0
    sandbox: trust
`))
	require.NoError(t, err)
	acp := c.Workers["claude"]
	assert.Equal(t, []string{"claude-code-acp", "--verbose"}, acp.ACP)
	assert.Equal(t, 30*time.Minute, acp.RunTimeout)
	assert.Equal(t, 2, acp.Retries)
	assert.Equal(t, "bwrap", acp.Sandbox)
	assert.Equal(t, "tok-123", acp.Env["ANTHROPIC_API_KEY"])
	h := c.Workers["claude-headless"]
	assert.Equal(t, 2*time.Hour, h.RunTimeout)
	assert.Equal(t, 0, h.Retries)
	assert.True(t, h.Network)
	assert.Equal(t, "trust", h.Sandbox)
	assert.Empty(t, c.Warnings)
}

func TestParseConfig_WorkerErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"both", "workers:\n  w:\n    acp: [a]\n    claude: claude\n",
			"agnx.yaml:2: workers.w has both acp and claude: keep one"},
		{"neither", "workers:\n  w:\n    network: true\n",
			"agnx.yaml:2: workers.w needs acp (the argv of an ACP agent"},
		{"bad name", "workers:\n  Big_W:\n    claude: claude\n",
			`agnx.yaml:2: worker name "Big_W" may contain only a-z, 0-9, _ and -, at most 32 of them`},
		{"short timeout", "workers:\n  w:\n    claude: claude\n    timeout: 5s\n",
			`agnx.yaml:4: workers.w.timeout "5s" must be a duration from 10s to 24h, e.g. 30m`},
		{"long timeout", "workers:\n  w:\n    claude: claude\n    timeout: 25h\n",
			`agnx.yaml:4: workers.w.timeout "25h" must be a duration from 10s to 24h`},
		{"retries", "workers:\n  w:\n    claude: claude\n    max_retries: 6\n",
			"agnx.yaml:4: workers.w.max_retries 6 is out of range 0..5"},
		{"sandbox", "workers:\n  w:\n    claude: claude\n    sandbox: docker\n",
			`agnx.yaml:4: workers.w.sandbox "docker" must be bwrap or trust`},
		{"relative program", "workers:\n  w:\n    acp: [./bin/agent]\n",
			"agnx.yaml:3: workers.w.acp must name a program on PATH or by its absolute path"},
		{"args with acp", "workers:\n  w:\n    acp: [agent]\n    args: [-x]\n",
			"agnx.yaml:4: workers.w.args is for claude"},
		{"env name", "workers:\n  w:\n    claude: claude\n    env: {1BAD: x}\n",
			`agnx.yaml:4: workers.w.env name "1BAD" must be letters, digits and _`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig("agnx.yaml", []byte(tc.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestRunners_BuildsEachKind(t *testing.T) {
	c, err := ParseConfig("agnx.yaml", []byte("workers:\n  w:\n    claude: claude\n  a:\n    acp: [claude-code-acp]\n"))
	require.NoError(t, err)
	require.NoError(t, c.Validate())
	c.DataDir = t.TempDir()
	rs, err := Runners(newSandboxes(c, slog.New(slog.DiscardHandler)), c)
	require.NoError(t, err)
	assert.IsType(t, &workers.ClaudeRunner{}, rs["w"])
	assert.IsType(t, &workers.ACPRunner{}, rs["a"])
}

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
	saved := newWorkerRunner
	t.Cleanup(func() { newWorkerRunner = saved })
	newWorkerRunner = func(*sandboxes, *Config, string, workers.Entry) (workers.Runner, error) { return editRunner{}, nil }
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
	require.NoError(t, cfg.validateWorkers())
	_, err := Init(cfg)
	require.NoError(t, err)
	setSpec(t, filepath.Join(cfg.AgentsDir, "assistant"), "  tools:\n    - {type: builtin, name: worker}\n"+
		"  notify:\n    deliveries:\n      - {type: webhook, url: "+url+"/hook}\n")
	app, err := Open(cfg, &Options{notifyLoopback: true})
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

// FuzzConfigWorkers: no workers: section panics the loader; a refusal is
// one line at a line of the file; an accepted one validates again.
func FuzzConfigWorkers(f *testing.F) {
	f.Add([]byte("workers:\n  claude:\n    acp: [claude-code-acp]\n  h:\n    claude: claude\n    args: [--model, sonnet]\n" +
		"    network: true\n    timeout: 45m\n    max_retries: 3\n    env: {K: v}\n    sandbox: trust\n"))
	f.Add([]byte("workers:\n  w:\n    acp: []\n    claude: ''\n"))
	f.Add([]byte("workers: [a, b]\n"))
	f.Add([]byte("workers:\n  w:\n    claude: c\n    timeout: -1s\n    max_retries: -1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig("agnx.yaml", data)
		if err == nil {
			require.NoError(t, c.Validate(), "an accepted config validates again")
			for name, e := range c.Workers {
				assert.True(t, workers.ValidName(name))
				assert.GreaterOrEqual(t, e.RunTimeout, workers.MinTimeout)
			}
			return
		}
		var e *agents.Error
		require.ErrorAs(t, err, &e)
		assert.NotContains(t, e.Msg, "\n")
	})
}
