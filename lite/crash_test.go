package lite

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

// The crash test runs turns in a child process (this test binary again)
// and SIGKILLs it at random moments. After every kill the database must
// open, hold every message the child saw acknowledged, with contiguous
// seqs, and the conversation must go on.

const crashEnv = "AGNX_CRASH_CHILD_DIR"

func crashConfig(dir string) *config.Config {
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.AgentsDir = filepath.Join(dir, "agents")
	return cfg
}

// TestCrashChild is the child's side; it does nothing in a normal run.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("runs only as the crash test's child")
	}
	cfg := crashConfig(dir)
	// No memory guard: this test is about kills, and the resident set
	// under -race or qemu (the emulator's own) is past the 40 MB budget.
	cfg.Runtime.MemoryLimitMB = 0
	app, err := Open(cfg, nil)
	if err != nil {
		fmt.Println("open-error", err)
		os.Exit(3)
	}
	ctx := context.Background()
	sid := os.Getenv("AGNX_CRASH_SESSION")
	sub, err := app.Loop.Subscribe(ctx, sid)
	if err != nil {
		fmt.Println("subscribe-error", err)
		os.Exit(3)
	}
	for i := 0; ; i++ {
		msg := fmt.Sprintf("msg %d-%d", os.Getpid(), i)
		if i%3 == 1 {
			msg = "use list_dir {} " + msg
		}
		sent, err := app.Loop.Send(ctx, sid, runtime.Input{Content: msg})
		if err != nil {
			fmt.Println("send-error", err)
			os.Exit(3)
		}
		fmt.Printf("ack %d %s\n", sent.Seq, msg)
		for e := range sub.C() {
			if e.Type == runtime.EvTurnEnd {
				fmt.Printf("done %d\n", e.Seq)
				break
			}
		}
	}
}

func TestCrash_SIGKILLLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test is not short")
	}
	testenv.SkipIfNoReexec(t, "re-executes the test binary as the child it kills")
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	dir := t.TempDir()
	cfg := crashConfig(dir)
	cfg.Runtime.MemoryLimitMB = 0 // as in the child
	_, err := config.Init(cfg)
	require.NoError(t, err)

	app, err := Open(cfg, nil)
	require.NoError(t, err)
	info, err := app.Loop.CreateSession(context.Background(), runtime.NewSession{Agent: "assistant", Gateway: "test"})
	require.NoError(t, err)
	require.NoError(t, app.Close())

	acked := map[uint64]string{} // user_message seq -> content
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	const kills = 50
	for range kills {
		lines := 1 + rng.IntN(8)
		crashOnce(t, dir, info.ID, lines, acked)
		checkLog(t, cfg, info.ID, acked)
	}

	// After all that, the session still works and remembers.
	app, err = Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	sub, err := app.Loop.Subscribe(context.Background(), info.ID)
	require.NoError(t, err)
	_, err = app.Loop.Send(context.Background(), info.ID, runtime.Input{Content: "still there?"})
	require.NoError(t, err)
	var last runtime.Event
	for e := range sub.C() {
		if e.Type == runtime.EvAssistant {
			last = e
		}
		if e.Type == runtime.EvTurnEnd {
			require.Equal(t, runtime.TurnCompleted, e.Reason)
			break
		}
	}
	assert.Equal(t, "echo: still there?", last.Content)
	reqs := fake.Requests()
	carried := reqs[len(reqs)-1].Messages
	assert.Greater(t, len(carried), 10, "the last request carries the earlier conversation")
	t.Logf("%d kills, %d acknowledged messages, last request carried %d messages", kills, len(acked), len(carried))
}

// crashOnce runs the child until it printed n lines, then kills it.
func crashOnce(t *testing.T, dir, sid string, n int, acked map[uint64]string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir, "AGNX_CRASH_SESSION="+sid)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	for read := 0; read < n && sc.Scan(); read++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "ack "):
			f := strings.SplitN(line, " ", 3)
			seq, err := strconv.ParseUint(f[1], 10, 64)
			require.NoError(t, err)
			acked[seq] = f[2]
		case strings.HasPrefix(line, "done "):
		default:
			t.Fatalf("child: %s", line)
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
}

// checkLog opens the database as a restarted daemon would and checks every
// acknowledged message is there, in a log without gaps.
func checkLog(t *testing.T, cfg *config.Config, sid string, acked map[uint64]string) {
	t.Helper()
	st, err := storage.Open(cfg.DBPath(), nil)
	require.NoError(t, err, "the database opens after a kill")
	defer st.Close()
	found := map[uint64]string{}
	var next uint64 = 1
	require.NoError(t, runtime.ReadEvents(st, sid, 0, func(e runtime.Event) error {
		require.Equal(t, next, e.Seq, "seqs are contiguous")
		next++
		if e.Type == runtime.EvUserMessage {
			found[e.Seq] = e.Content
		}
		return nil
	}))
	for seq, msg := range acked {
		require.Equal(t, msg, found[seq], "acknowledged message %d is in the log", seq)
	}
}
