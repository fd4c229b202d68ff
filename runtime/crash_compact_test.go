package runtime_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// compactCrashDirEnv is the data dir of TestCompactCrashChild.
const compactCrashDirEnv = "AGNX_COMPACT_CRASH_DIR"

// summarizer is a model in process: it answers turns at once, and summary
// calls (told by their instructions) with block's result.
type summarizer struct {
	mu    sync.Mutex
	reqs  []*runtime.Request
	block func(ctx context.Context) error
}

func isSummary(req *runtime.Request) bool {
	return strings.HasPrefix(req.System, "You summarise a conversation")
}

func (p *summarizer) Stream(ctx context.Context, req *runtime.Request, _ func(runtime.Delta)) (*runtime.Response, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	text := "noted: " + strings.Repeat("milk ", 20)
	if isSummary(req) {
		if p.block != nil {
			if err := p.block(ctx); err != nil {
				return nil, err
			}
		}
		text = "the user keeps talking about milk"
	}
	return &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant, Content: text}}, nil
}

func (p *summarizer) requests() []*runtime.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*runtime.Request(nil), p.reqs...)
}

func compactCrashLoop(dir string, p runtime.Provider) (*storage.Store, *runtime.Loop, error) {
	st, err := storage.Open(filepath.Join(dir, "agnx.db"), nil)
	if err != nil {
		return nil, nil, err
	}
	spec := &agents.Agent{Name: "assistant", Model: agents.Model{Name: "m", MaxInputTokens: 100000},
		Session: agents.Session{Context: agents.Context{MaxHistoryTokens: 150}}}
	agent := &runtime.LoadedAgent{Spec: spec, Provider: p}
	return st, runtime.New(runtime.Options{Store: st, Agents: loader{"assistant": agent}}), nil
}

// turnIn sends text and waits for the turn's end.
func turnIn(ctx context.Context, loop *runtime.Loop, sid, text string) error {
	sub, err := loop.Subscribe(ctx, sid)
	if err != nil {
		return err
	}
	defer sub.Close()
	if _, err := loop.Send(ctx, sid, runtime.Input{Content: text}); err != nil {
		return err
	}
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd {
			return nil
		}
	}
	return fmt.Errorf("no turn_end")
}

// TestCompactCrashChild is the child of TestCrash_DuringCompaction: two
// turns outgrow the budget, and the summary call blocks (after saying
// "summarizing") until the child is killed.
func TestCompactCrashChild(t *testing.T) {
	dir := os.Getenv(compactCrashDirEnv)
	if dir == "" {
		t.Skip("runs only as a crash test's child")
	}
	p := &summarizer{block: func(ctx context.Context) error {
		fmt.Println("summarizing")
		<-ctx.Done()
		return ctx.Err()
	}}
	_, loop, err := compactCrashLoop(dir, p)
	if err != nil {
		fmt.Println("open-error", err)
		os.Exit(3)
	}
	go func() { _ = loop.Run(context.Background()) }()
	ctx := context.Background()
	info, err := loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant", Gateway: "test"})
	if err == nil {
		fmt.Println("session", info.ID)
		for i := 0; i < 2 && err == nil; i++ {
			err = turnIn(ctx, loop, info.ID, fmt.Sprintf("turn %d %s", i, strings.Repeat("milk ", 40)))
		}
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	select {} // until killed
}

// SIGKILL while the summary call is in flight: after the restart nothing
// is lost, the window is whole, the next turn runs, and its end compacts.
func TestCrash_DuringCompaction(t *testing.T) {
	testenv.SkipIfNoReexec(t, "re-executes the test binary as the child it kills")
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCompactCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), compactCrashDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	var sid string
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "session "); ok {
			sid = id
		}
		if sc.Text() == "summarizing" {
			break
		}
		require.False(t, strings.HasPrefix(sc.Text(), "error") || strings.HasPrefix(sc.Text(), "open-error"), sc.Text())
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.NotEmpty(t, sid, "the child started a session")

	p := &summarizer{}
	st, loop, err := compactCrashLoop(dir, p)
	require.NoError(t, err)
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	exited := make(chan error, 1)
	go func() { exited <- loop.Run(ctx) }()
	defer func() {
		cancel()
		assert.NoError(t, <-exited)
	}()
	<-loop.Ready()

	var evs []runtime.Event
	require.NoError(t, runtime.ReadEvents(st, sid, 0, func(e runtime.Event) error {
		evs = append(evs, e)
		return nil
	}))
	assert.Equal(t, []runtime.EventType{runtime.EvSessionStart,
		runtime.EvUserMessage, runtime.EvAssistant, runtime.EvTurnEnd,
		runtime.EvUserMessage, runtime.EvAssistant, runtime.EvTurnEnd}, types(evs), "both turns are kept, no compaction")

	require.NoError(t, turnIn(ctx, loop, sid, "turn 2"))
	first := p.requests()[0]
	require.False(t, isSummary(first))
	assert.Len(t, first.Messages, 5, "the whole window, nothing lost")
	assert.Equal(t, runtime.RoleUser, first.Messages[0].Role)

	sub, err := loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	defer sub.Close()
	var compacted runtime.Event
	require.NoError(t, runtime.ReadEvents(st, sid, 0, func(e runtime.Event) error {
		if e.Type == runtime.EvHistoryCompaction {
			compacted = e
		}
		return nil
	}))
	if compacted.Type == "" { // not committed yet: it comes next
		for e := range sub.C() {
			if e.Type == runtime.EvHistoryCompaction {
				compacted = e
				break
			}
		}
	}
	require.NotNil(t, compacted.Compaction)
	assert.Equal(t, runtime.CompactSummary, compacted.Compaction.Method)
	assert.Equal(t, "the user keeps talking about milk", compacted.Content)

	require.NoError(t, turnIn(ctx, loop, sid, "turn 3"))
	reqs := p.requests()
	last := reqs[len(reqs)-1]
	assert.Contains(t, last.System, "the user keeps talking about milk")
	assert.Equal(t, runtime.RoleUser, last.Messages[0].Role)
}
