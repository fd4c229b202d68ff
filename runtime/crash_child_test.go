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

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
	"github.com/agnx-lite/agnx-lite/runtime/llm/ollama"
	"github.com/agnx-lite/agnx-lite/storage"
)

// A crash case runs a turn of a continue agent with one tool in a child
// process (the test binary, re-executed), kills it mid-turn, and resumes
// the turn in the test's own loop over the same database.
type crashCase struct {
	tool    func(dir string) runtime.Tool
	rounds  int    // spec.session.max_tool_iterations
	message string // what the child sends
}

var crashCases = map[string]crashCase{
	"resume": {tool: func(dir string) runtime.Tool { return appendTool{dir} }, rounds: 10, message: "use append {}"},
	"rounds": {tool: func(dir string) runtime.Tool { return stepTool{dir} }, rounds: 3, message: "keep stepping"},
	// A first message killed while its model call runs (crash_discard_test.go).
	"unanswered": {tool: func(dir string) runtime.Tool { return appendTool{dir} }, rounds: 10, message: "hello"},
	// A parent waiting on two children (subagent_crash_test.go).
	"subagents": {tool: func(string) runtime.Tool { return runtime.AgentTool{} }, rounds: 10, message: "delegate: alpha; beta"},
}

// The child's environment: the case, the data dir, the fake model's URL.
const (
	crashCaseEnv = "AGNX_CRASH_CASE"
	crashDirEnv  = "AGNX_CRASH_DIR"
	crashBaseEnv = "AGNX_CRASH_BASE"
)

// loop is the case's loop on the store in dir, talking to the fake at base.
func (c crashCase) loop(dir, base string) (*storage.Store, *runtime.Loop, error) {
	st, err := storage.Open(filepath.Join(dir, "agnx.db"), nil)
	if err != nil {
		return nil, nil, err
	}
	spec := &agents.Agent{Name: "assistant", Model: agents.Model{Provider: "ollama", Name: "m"},
		Session: agents.Session{OnDisconnect: "continue", MaxToolIterations: c.rounds}}
	agent := &runtime.LoadedAgent{Spec: spec, Tools: []runtime.Tool{c.tool(dir)},
		Provider: ollama.New(ollama.Options{BaseURL: base, HTTP: llm.Options{MaxAttempts: 1}})}
	return st, runtime.New(runtime.Options{Store: st, Agents: loader{"assistant": agent}}), nil
}

// TestCrashChild is the child of the crash tests: it starts the case's
// turn, prints "session <id>" and the tool's lines, and waits to be killed.
func TestCrashChild(t *testing.T) {
	c, ok := crashCases[os.Getenv(crashCaseEnv)]
	if !ok {
		t.Skip("runs only as a crash test's child")
	}
	_, loop, err := c.loop(os.Getenv(crashDirEnv), os.Getenv(crashBaseEnv))
	if err != nil {
		fmt.Println("open-error", err)
		os.Exit(3)
	}
	go func() { _ = loop.Run(context.Background()) }()
	ctx := context.Background()
	info, err := loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant", Gateway: "test"})
	if err == nil {
		fmt.Println("session", info.ID)
		_, err = loop.Send(ctx, info.ID, runtime.Input{Content: c.message})
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	select {} // until killed
}

// killChild runs case name in a child on dir, reads lines of the tool
// (each must be line) and SIGKILLs it; it returns the session's id.
func killChild(t *testing.T, name, dir, base string, lines int, line string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashCaseEnv+"="+name, crashDirEnv+"="+dir, crashBaseEnv+"="+base)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	var sid string
	for seen := 0; seen < lines && sc.Scan(); {
		if id, ok := strings.CutPrefix(sc.Text(), "session "); ok {
			sid = id
			continue
		}
		require.Equal(t, line, sc.Text(), "child")
		seen++
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.NotEmpty(t, sid)
	return sid
}

// resumed opens the case's loop on dir again and runs it until the test
// calls stop (which also checks that Run returned cleanly); ctx bounds
// the rest of the test.
func resumed(t *testing.T, name, dir, base string) (st *storage.Store, loop *runtime.Loop, ctx context.Context, stop func()) {
	t.Helper()
	st, loop, err := crashCases[name].loop(dir, base)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	exited := make(chan error, 1)
	go func() { exited <- loop.Run(ctx) }()
	return st, loop, ctx, func() {
		cancel()
		require.NoError(t, <-exited)
	}
}
