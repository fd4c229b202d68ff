package lite

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite/autonomy"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/tasks"
	"github.com/agnx-lite/agnx-lite/storage"
)

// The task crash test starts an agent on its task in a child process
// (this test binary again) and SIGKILLs it inside the transaction that
// stores the task's first message and moves it to in_progress (nothing of
// it is durable: after a restart it starts once), or after that commit
// (it is started: a restart never starts it again).

const (
	taskCrashEnv   = "AGNX_TASK_CRASH_DIR"
	taskCrashStage = "AGNX_TASK_CRASH_STAGE" // in-commit or started
)

func taskCrashConfig(dir string) *config.Config {
	cfg := crashConfig(dir)
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Tasks.Start = config.TasksStartNow
	return cfg
}

// TestTaskCrashChild is the child's side; it does nothing in a normal run.
func TestTaskCrashChild(t *testing.T) {
	dir := os.Getenv(taskCrashEnv)
	if dir == "" {
		t.Skip("runs only as the task crash test's child")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	hold := func() {
		fmt.Println(os.Getenv(taskCrashStage))
		<-ctx.Done()
		os.Exit(4)
	}
	app, err := Open(taskCrashConfig(dir), &Options{autonomy: func(_ *autonomy.SchedulesOptions, to *autonomy.TasksOptions) {
		if os.Getenv(taskCrashStage) == "in-commit" {
			to.InCommit = hold
		} else {
			to.Started = hold
		}
	}})
	if err != nil {
		fmt.Println("open-error", err)
		os.Exit(3)
	}
	_ = app.tasks.Start(context.Background())
	fmt.Println("running")
	<-ctx.Done()
	os.Exit(4)
}

func TestTasks_SIGKILLStartsATaskOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test is not short")
	}
	testenv.SkipIfNoReexec(t, "re-executes the test binary as the child it kills")
	fake := llmtest.NewHandler(t, llmtest.Ollama, taskModel)
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	for _, stage := range []string{"in-commit", "started"} {
		t.Run(stage, func(t *testing.T) { taskCrashOnce(t, stage) })
	}
}

// silentModel is the address of a model server that answers nothing
// until its client goes away (the server notices that only once the
// request's body is read).
func silentModel(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func taskCrashOnce(t *testing.T, stage string) {
	dir := t.TempDir()
	cfg := taskCrashConfig(dir)
	_, err := config.Init(cfg)
	require.NoError(t, err)
	app, err := Open(cfg, &Options{NoSync: true})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = app.Tasks().Add(ctx, tasks.ByPerson, tasks.Task{Title: "water the plants", Assignee: "assistant"})
	require.NoError(t, err)
	require.NoError(t, app.Close())

	cmd := exec.Command(os.Args[0], "-test.run=^TestTaskCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), taskCrashEnv+"="+dir, taskCrashStage+"="+stage)
	if stage == "started" {
		// The child's model never answers, so the started turn is still
		// running when it is killed: with the fake model it could end,
		// and its task be recorded done, between "started" and the kill.
		cmd.Env = append(cmd.Env, "OLLAMA_HOST="+silentModel(t))
	}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for line := ""; line != stage; {
		line = recv(t, lines, "the child reaching "+stage)
		require.Contains(t, []string{"running", stage}, line, "child: %s", line)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	st, err := storage.Open(cfg.DBPath(), nil)
	require.NoError(t, err)
	left, err := tasks.New(tasks.Options{DB: tasks.FromStore(st)}).Get(ctx, "", "T-1")
	require.NoError(t, err)
	require.NoError(t, st.Close())
	if stage == "in-commit" {
		assert.Equal(t, tasks.Todo, left.Status, "not started")
		assert.Empty(t, left.Session)
	} else {
		assert.Equal(t, tasks.InProgress, left.Status, "started")
		assert.NotEmpty(t, left.Session)
	}

	app, ticks, ends := openTasks(t, cfg)
	wait(t, ticks, "the first tick after the restart")
	if stage == "in-commit" {
		wait(t, ends, "the task's turn end")
	}
	got, err := app.Tasks().Get(ctx, "", "T-1")
	require.NoError(t, err)
	require.NoError(t, app.Close())
	if stage == "started" {
		assert.Equal(t, left.Session, got.Session, "not started again")
	} else {
		assert.Equal(t, tasks.Done, got.Status)
		assert.Equal(t, "done: water the plants", got.Result)
	}

	st, err = storage.Open(cfg.DBPath(), nil)
	require.NoError(t, err)
	defer st.Close()
	sessions, err := runtime.ListSessions(st)
	require.NoError(t, err)
	prompts := 0
	for _, s := range sessions {
		require.NoError(t, runtime.ReadEvents(st, s.ID, 0, func(e runtime.Event) error {
			if e.Type == runtime.EvUserMessage && e.Origin == autonomy.TaskOrigin {
				prompts++
			}
			return nil
		}))
	}
	assert.Equal(t, 1, prompts, "the task's prompt is stored once")
}
