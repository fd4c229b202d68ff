package lite

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// The daemon's background_process end to end: spawn is denied by a bash:
// deny rule, runs in the sandbox with none of the daemon's secrets, and
// its end is told to the session that spawned it.
func TestBackgroundProcess_EndToEnd(t *testing.T) {
	needSandbox(t)
	t.Setenv("OPENAI_API_KEY", "sk-daemon-secret")
	call := func(id, args string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: id, Name: "background_process", Arguments: args}}}
	}
	fake := llmtest.NewOllama(t,
		call("c1", `{"action":"spawn","command":"curl http://example.com"}`),
		call("c2", `{"action":"spawn","wait":true,"command":"env; cat /proc/1/environ | tr '\\0' '\\n'"}`),
		call("c3", `{"action":"spawn","command":"echo e2e-done"}`),
		llmtest.Reply{Text: "started"})
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	dir := filepath.Join(cfg.AgentsDir, "assistant")
	setSpec(t, dir, "  tools:\n    - {type: builtin, name: background_process}\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, agents.PolicyFile), []byte("deny: [\"bash:curl\"]\n"), 0o600))
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()

	ctx := context.Background()
	info, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant"})
	require.NoError(t, err)
	sub, err := app.Loop.Subscribe(ctx, info.ID)
	require.NoError(t, err)
	defer sub.Close()
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "go"})
	require.NoError(t, err)
	results := map[string]runtime.Event{}
	timeout := time.After(60 * time.Second)
	for notice := ""; notice == ""; {
		select {
		case e := <-sub.C():
			switch {
			case e.Type == runtime.EvToolResult:
				results[e.CallID] = e
			case e.Type == runtime.EvAssistant && e.Origin == "process":
				notice = e.Content
				assert.Contains(t, notice, "exited with code 0")
				assert.Contains(t, notice, "e2e-done")
			}
		case <-timeout:
			t.Fatalf("no process notice came; results: %v", results)
		}
	}
	assert.Equal(t, "Command 'curl http://example.com' was denied by policy. This command is not allowed. (rule bash:curl)",
		results["c1"].Content)
	assert.Contains(t, results["c2"].Content, `"status": "exited"`)
	assert.Contains(t, results["c2"].Content, "PATH=")
	assert.NotContains(t, results["c2"].Content, "sk-daemon-secret")
	assert.Contains(t, results["c3"].Content, `"handle": "proc_`)
	a, err := app.Agents.LoadAgent("assistant")
	require.NoError(t, err)
	logs, err := filepath.Glob(filepath.Join(a.Spec.Workspace, ".agnx", "processes", "proc_*.log"))
	require.NoError(t, err)
	assert.Len(t, logs, 2, "the logs are in the workspace")
}

// The daemon's processes die with it; after a restart their handles
// report lost, with the last output they printed.
func TestBackgroundProcess_DaemonRestart(t *testing.T) {
	needSandbox(t)
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	setSpec(t, filepath.Join(cfg.AgentsDir, "assistant"), "  tools:\n    - {type: builtin, name: background_process}\n")
	bg := func(app *App, ctx context.Context, args string) runtime.Result {
		t.Helper()
		a, err := app.Agents.LoadAgent("assistant")
		require.NoError(t, err)
		for _, tool := range a.Tools {
			if tool.Spec().Name == "background_process" {
				res, err := tool.Run(ctx, []byte(args))
				require.NoError(t, err)
				return res
			}
		}
		t.Fatal("the agent has no background_process tool")
		return runtime.Result{}
	}
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	info, err := app.Loop.CreateSession(context.Background(), runtime.NewSession{Agent: "assistant"})
	require.NoError(t, err)
	ctx := runtime.WithCall(context.Background(), runtime.CallInfo{SessionID: info.ID, Agent: "assistant"})
	res := bg(app, ctx, `{"action":"spawn","interactive":true,"command":"read x; echo \"printed $x\"; exec sleep 600"}`)
	require.False(t, res.IsError, res.Content)
	var spawned struct{ Handle string }
	require.NoError(t, json.Unmarshal([]byte(res.Content), &spawned))
	handle := spawned.Handle
	res = bg(app, ctx, `{"action":"watch","handle":"`+handle+`","pattern":"printed"}`)
	require.False(t, res.IsError, res.Content)
	sub, err := app.Loop.Subscribe(context.Background(), info.ID)
	require.NoError(t, err)
	bg(app, ctx, `{"action":"write","handle":"`+handle+`","input":"before\n"}`)
	for e := range sub.C() { // the pattern's notice: the line is in the log
		if e.Type == runtime.EvAssistant && e.Origin == "process" {
			break
		}
	}
	sub.Close()
	var st struct{ Pid int }
	require.NoError(t, json.Unmarshal([]byte(bg(app, ctx, `{"action":"status","handle":"`+handle+`"}`).Content), &st))
	require.Positive(t, st.Pid)
	pid := st.Pid
	require.NoError(t, app.Close())
	assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the process died with the daemon")

	app, err = Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	res = bg(app, ctx, `{"action":"status","handle":"`+handle+`"}`)
	assert.Contains(t, res.Content, `"status": "lost"`)
	assert.Contains(t, res.Content, "printed before")
}
