package lite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/autonomy"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/tasks"
)

// taskModel answers a task's prompt with "done: <its title line>".
func taskModel(r llmtest.RecordedRequest) llmtest.Reply {
	last := r.Messages[len(r.Messages)-1].Content
	lines := strings.Split(last, "\n")
	if len(lines) > 2 {
		return llmtest.Reply{Text: "done: " + lines[2]}
	}
	return llmtest.Reply{Text: "done"}
}

// openTasks opens an App on cfg with hooks for the task timer's ticks
// and the recorded turn ends, and starts the timer.
func openTasks(t *testing.T, cfg *config.Config) (app *App, ticks, ends chan struct{}) {
	t.Helper()
	ticks, ends = make(chan struct{}, 100), make(chan struct{}, 100)
	app, err := Open(cfg, &Options{NoSync: true, autonomy: func(_ *autonomy.SchedulesOptions, to *autonomy.TasksOptions) {
		to.Ticked = func() { ticks <- struct{}{} }
		to.Recorded = func() { ends <- struct{}{} }
	}})
	require.NoError(t, err)
	_ = app.tasks.Start(context.Background())
	return app, ticks, ends
}

func wait(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("waited 30s for %s", what)
	}
}

func taskSessions(t *testing.T, app *App) []runtime.SessionInfo {
	t.Helper()
	all, err := app.Loop.Sessions(context.Background())
	require.NoError(t, err)
	var out []runtime.SessionInfo
	for _, s := range all {
		if s.Gateway == TaskGateway {
			out = append(out, s)
		}
	}
	return out
}

// start: now: a task assigned to an agent starts it at once; its answer
// becomes the result and the task is done; the task that depended on it
// starts then, with that result in its prompt; a restart starts nothing
// again.
func TestTasks_StartNowEndToEnd(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, taskModel)
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := serveConfig(t, t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Tasks.Start = config.TasksStartNow
	app, ticks, ends := openTasks(t, cfg)
	wait(t, ticks, "the first tick")
	ctx := context.Background()

	_, err := app.Tasks().Add(ctx, tasks.ByPerson, tasks.Task{Title: "collect the data", Assignee: "assistant"})
	require.NoError(t, err)
	_, err = app.Tasks().Add(ctx, tasks.ByPerson, tasks.Task{Title: "write the report", Assignee: "assistant", DependsOn: []string{"T-1"}})
	require.NoError(t, err)
	wait(t, ends, "T-1's turn end")
	one, err := app.Tasks().Get(ctx, "", "T-1")
	require.NoError(t, err)
	assert.Equal(t, tasks.Done, one.Status)
	assert.Equal(t, "done: collect the data", one.Result)
	require.GreaterOrEqual(t, len(one.History), 3)
	assert.Equal(t, "agent:assistant", one.History[1].By)
	assert.Contains(t, one.History[1].What, "todo → in_progress")
	assert.Equal(t, "in_progress → done; result recorded", reorder(one.History[2].What))

	wait(t, ends, "T-2's turn end")
	two, err := app.Tasks().Get(ctx, "", "T-2")
	require.NoError(t, err)
	assert.Equal(t, tasks.Done, two.Status)
	assert.Equal(t, "done: write the report", two.Result)
	reqs := fake.Requests()
	require.Len(t, reqs, 2)
	prompt := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	assert.Contains(t, prompt, "Result of T-1 (collect the data):\ndone: collect the data")
	require.Len(t, taskSessions(t, app), 2)
	assert.Equal(t, "default/T-2", taskSessions(t, app)[0].ChatID)
	require.NoError(t, app.Close())

	// Restarted: the boards are read again and nothing starts twice.
	app, ticks, _ = openTasks(t, cfg)
	defer app.Close()
	wait(t, ticks, "the first tick after the restart")
	assert.Len(t, fake.Requests(), 2)
	assert.Len(t, taskSessions(t, app), 2)
}

// start: manual starts only a task given a start_at, once it is due.
func TestTasks_ManualStartsOnlyAtStartAt(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, taskModel)
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := serveConfig(t, t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	app, ticks, ends := openTasks(t, cfg)
	defer app.Close()
	ctx := context.Background()
	wait(t, ticks, "the first tick")
	_, err := app.Tasks().Add(ctx, tasks.ByPerson, tasks.Task{Title: "waits for a person", Assignee: "assistant"})
	require.NoError(t, err)
	soon := time.Now().Add(1500 * time.Millisecond)
	_, err = app.Tasks().Add(ctx, tasks.ByPerson, tasks.Task{Title: "starts at its time", Assignee: "assistant", StartAt: &soon})
	require.NoError(t, err)
	wait(t, ends, "T-2's turn end")
	assert.False(t, time.Now().Before(soon), "not before its time")
	two, _ := app.Tasks().Get(ctx, "", "T-2")
	assert.Equal(t, tasks.Done, two.Status)
	one, _ := app.Tasks().Get(ctx, "", "T-1")
	assert.Equal(t, tasks.Todo, one.Status)
	assert.Len(t, fake.Requests(), 1)
}

// reorder sorts the parts of a history entry (the order of a change's
// parts is the order update applies them).
func reorder(what string) string {
	parts := strings.Split(what, "; ")
	if len(parts) == 2 && strings.HasPrefix(parts[0], "result") {
		parts[0], parts[1] = parts[1], parts[0]
	}
	return strings.Join(parts, "; ")
}

// An agent given the tasks tool adds a task with it: the history names
// the agent.
func TestTasks_ToolInATurn(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, func(r llmtest.RecordedRequest) llmtest.Reply {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return llmtest.Reply{Text: "noted: " + last.Content}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "tasks",
			Arguments: `{"action":"add","title":"buy milk","priority":"low"}`}}}
	})
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := serveConfig(t, t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	setSpec(t, cfg.AgentsDir+"/assistant", "  tools:\n    - {type: builtin, name: tasks}\n")
	app, err := Open(cfg, &Options{NoSync: true})
	require.NoError(t, err)
	defer app.Close()
	ctx := context.Background()
	info, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant", Gateway: "cli"})
	require.NoError(t, err)
	sub, err := app.Loop.Follow(ctx, info.ID, 0)
	require.NoError(t, err)
	defer sub.Close()
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "remember to buy milk"})
	require.NoError(t, err)
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd {
			break
		}
	}
	task, err := app.Tasks().Get(ctx, "", "T-1")
	require.NoError(t, err)
	assert.Equal(t, "buy milk", task.Title)
	assert.Equal(t, tasks.Low, task.Priority)
	assert.Equal(t, "agent:assistant", task.History[0].By)
}
