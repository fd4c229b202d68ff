package runtime_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/llm/ollama"
	"github.com/agnx-lite/agnx-lite/storage"
)

const resumeEnv = "AGNX_RESUME_CHILD_DIR"

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

// resumeLoop is the loop of a continue agent with the append tool, on the
// store in dir, talking to the fake at base.
func resumeLoop(dir, base string) (*storage.Store, *runtime.Loop, error) {
	st, err := storage.Open(filepath.Join(dir, "agnx.db"), nil)
	if err != nil {
		return nil, nil, err
	}
	spec := &agents.Agent{Name: "assistant", Model: agents.Model{Provider: "ollama", Name: "m"},
		Session: agents.Session{OnDisconnect: "continue", MaxToolIterations: 10}}
	agent := &runtime.LoadedAgent{Spec: spec, Tools: []runtime.Tool{appendTool{dir}},
		Provider: ollama.New(ollama.Options{BaseURL: base, HTTP: llm.Options{MaxAttempts: 1}})}
	return st, runtime.New(runtime.Options{Store: st, Agents: loader{"assistant": agent}}), nil
}

// TestResumeChild is the child of TestCrash_ResumedTurnNeverRerunsATool.
func TestResumeChild(t *testing.T) {
	dir := os.Getenv(resumeEnv)
	if dir == "" {
		t.Skip("runs only as the resume crash test's child")
	}
	_, loop, err := resumeLoop(dir, os.Getenv("AGNX_RESUME_BASE"))
	if err != nil {
		fmt.Println("open-error", err)
		os.Exit(3)
	}
	go func() { _ = loop.Run(context.Background()) }()
	ctx := context.Background()
	info, err := loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant", Gateway: "test"})
	if err == nil {
		fmt.Println("session", info.ID)
		_, err = loop.Send(ctx, info.ID, runtime.Input{Content: "use append {}"})
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	select {} // until killed, mid-call
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
	cmd := exec.Command(os.Args[0], "-test.run=^TestResumeChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), resumeEnv+"="+dir, "AGNX_RESUME_BASE="+fake.BaseURL())
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	var sid string
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "session "); ok {
			sid = id
			continue
		}
		require.Equal(t, "appended", line, "child")
		break
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.NotEmpty(t, sid)

	st, loop, err := resumeLoop(dir, fake.BaseURL())
	require.NoError(t, err)
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	exited := make(chan error, 1)
	go func() { exited <- loop.Run(ctx) }()
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
	cancel()
	require.NoError(t, <-exited)

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
