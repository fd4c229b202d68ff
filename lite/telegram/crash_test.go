package telegram_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

// The crash tests run the gateway in a child process (this test binary
// again) against the parent's fakes, SIGKILL it at a chosen moment, start
// it again, and check what the chat and the agent saw.

const (
	childDirEnv  = "AGNX_TG_CRASH_DIR"
	childURLEnv  = "AGNX_TG_CRASH_URL"
	childModeEnv = "AGNX_TG_CRASH_MODE"
)

// TestCrashChild is the child's side; it does nothing in a normal run.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		t.Skip("runs only as the crash tests' child")
	}
	app, err := lite.Open(testConfig(dir, os.Getenv(childURLEnv)), nil)
	if err != nil {
		fmt.Println("open-error", err)
		os.Exit(3)
	}
	// A long edit interval: only the final answer carries the full text.
	o := telegram.Options{PollTimeout: time.Second, EditInterval: time.Hour}
	if os.Getenv(childModeEnv) == "stop-before-commit" {
		o.BeforeSend = func(id int64) {
			fmt.Printf("received %d\n", id)
			select {} // the parent kills us here
		}
	}
	gw, err := lite.NewTelegram(app, o)
	if err != nil {
		fmt.Println("gateway-error", err)
		os.Exit(3)
	}
	if err := gw.Start(context.Background()); err != nil {
		fmt.Println("gateway-error", err)
		os.Exit(3)
	}
	fmt.Println("started")
	select {}
}

// child starts the gateway process; its output lines come on the channel.
func child(t *testing.T, dir, url, mode string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childURLEnv+"="+url, childModeEnv+"="+mode)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	waitLine(t, lines, "started")
	return cmd, lines
}

// waitLine waits for the child to print a line starting with prefix.
func waitLine(t *testing.T, lines <-chan string, prefix string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the child ended before printing %q", prefix)
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
			if strings.Contains(line, "error") {
				t.Fatalf("child: %s", line)
			}
		case <-timeout:
			t.Fatalf("the child did not print %q", prefix)
		}
	}
}

func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
}

func crashRig(t *testing.T) (*tgtest.Server, *config.Config, string) {
	if testing.Short() {
		t.Skip("crash tests are not short")
	}
	testenv.SkipIfNoReexec(t, "re-executes the test binary as the child it kills")
	tg := tgtest.New(t)
	t.Setenv("OLLAMA_HOST", llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo()).BaseURL())
	dir := t.TempDir()
	cfg := testConfig(dir, tg.URL)
	_, err := config.Init(cfg)
	require.NoError(t, err)
	return tg, cfg, dir
}

// countIn counts the bot's messages and calls that carried text.
func countIn(tg *tgtest.Server, text string) (calls int) {
	for _, c := range tg.Calls("sendMessage", "editMessageText") {
		if strings.Contains(c.Str("text"), text) {
			calls++
		}
	}
	return calls
}

// userMessages reads the user messages of every session from the store.
func storedUserMessages(t *testing.T, cfg *config.Config, text string) int {
	st, err := storage.Open(cfg.DBPath(), nil)
	require.NoError(t, err)
	defer st.Close()
	list, err := runtime.ListSessions(st)
	require.NoError(t, err)
	n := 0
	for _, s := range list {
		require.NoError(t, runtime.ReadEvents(st, s.ID, 0, func(e runtime.Event) error {
			if e.Type == runtime.EvUserMessage && e.Content == text {
				n++
			}
			return nil
		}))
	}
	return n
}

// (a) Killed between receiving an update and committing its message: the
// update is fetched again and answered once.
func TestCrash_BetweenReceiveAndCommit(t *testing.T) {
	tg, cfg, dir := crashRig(t)
	c, lines := child(t, dir, tg.URL, "stop-before-commit")
	id := tg.Queue(tgtest.Private(owner, "crash-a"))
	assert.Equal(t, fmt.Sprintf("received %d", id), waitLine(t, lines, "received"))
	kill(t, c)
	assert.Equal(t, 0, storedUserMessages(t, cfg, "crash-a"), "nothing was committed")

	c, _ = child(t, dir, tg.URL, "")
	tg.Wait(t, "the answer after the restart", func() bool {
		for _, s := range tg.Texts(owner) {
			if s == "echo: crash-a" {
				return true
			}
		}
		return false
	})
	kill(t, c)
	assert.Equal(t, 1, storedUserMessages(t, cfg, "crash-a"), "the agent saw it once")
	assert.Equal(t, []string{"echo: crash-a"}, tg.Texts(owner), "one reply")
}

// (b) Killed after the answer was sent but before its delivery was
// recorded: after the restart it is not sent again.
func TestCrash_BetweenSendAndCommit(t *testing.T) {
	tg, cfg, dir := crashRig(t)
	held := tg.Hold(func(c tgtest.Call) bool {
		return (c.Method == "sendMessage" || c.Method == "editMessageText") && strings.Contains(c.Str("text"), "crash-b")
	})
	c, _ := child(t, dir, tg.URL, "")
	tg.Queue(tgtest.Private(owner, "crash-b"))
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the answer was never sent")
	}
	kill(t, c)

	polls := len(tg.Calls("getUpdates"))
	c, _ = child(t, dir, tg.URL, "")
	tg.Wait(t, "the restarted child to poll", func() bool { return len(tg.Calls("getUpdates")) > polls })
	tg.Queue(tgtest.Private(owner, "after"))
	tg.Wait(t, "the next answer", func() bool { return countIn(tg, "echo: after") > 0 })
	kill(t, c)
	assert.Equal(t, 1, countIn(tg, "crash-b"), "the answer was sent once, not again after the restart")
	assert.Equal(t, 1, storedUserMessages(t, cfg, "crash-b"))
}
