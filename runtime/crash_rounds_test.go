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

const roundsEnv = "AGNX_ROUNDS_CHILD_DIR"

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

// roundsLoop is the loop of a continue agent allowed 3 tool rounds.
func roundsLoop(dir, base string) (*storage.Store, *runtime.Loop, error) {
	st, err := storage.Open(filepath.Join(dir, "agnx.db"), nil)
	if err != nil {
		return nil, nil, err
	}
	spec := &agents.Agent{Name: "assistant", Model: agents.Model{Provider: "ollama", Name: "m"},
		Session: agents.Session{OnDisconnect: "continue", MaxToolIterations: 3}}
	agent := &runtime.LoadedAgent{Spec: spec, Tools: []runtime.Tool{stepTool{dir}},
		Provider: ollama.New(ollama.Options{BaseURL: base, HTTP: llm.Options{MaxAttempts: 1}})}
	return st, runtime.New(runtime.Options{Store: st, Agents: loader{"assistant": agent}}), nil
}

// TestRoundsChild is the child of TestCrash_ResumedTurnKeepsCountingRounds.
func TestRoundsChild(t *testing.T) {
	dir := os.Getenv(roundsEnv)
	if dir == "" {
		t.Skip("runs only as the rounds crash test's child")
	}
	_, loop, err := roundsLoop(dir, os.Getenv("AGNX_ROUNDS_BASE"))
	if err != nil {
		fmt.Println("open-error", err)
		os.Exit(3)
	}
	go func() { _ = loop.Run(context.Background()) }()
	ctx := context.Background()
	info, err := loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant", Gateway: "test"})
	if err == nil {
		fmt.Println("session", info.ID)
		_, err = loop.Send(ctx, info.ID, runtime.Input{Content: "keep stepping"})
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	select {} // until killed, in the second round's call
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
	cmd := exec.Command(os.Args[0], "-test.run=^TestRoundsChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), roundsEnv+"="+dir, "AGNX_ROUNDS_BASE="+fake.BaseURL())
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	var sid string
	steps := 0
	for steps < 2 && sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "session "); ok {
			sid = id
			continue
		}
		require.Equal(t, "stepped", line, "child")
		steps++
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.NotEmpty(t, sid)
	require.Len(t, fake.Requests(), 2, "two rounds before the kill")

	st, loop, err := roundsLoop(dir, fake.BaseURL())
	require.NoError(t, err)
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	exited := make(chan error, 1)
	go func() { exited <- loop.Run(ctx) }()
	sub, err := loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	open()
	evs := collect(ctx, t, sub)
	cancel()
	require.NoError(t, <-exited)

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
