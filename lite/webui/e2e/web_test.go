package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

const (
	chromium = "/usr/bin/chromium"
	token    = "web-test-token-0123456789abcdef"
	// budget bounds the run once the daemon is built; the browser script
	// takes seconds.
	budget = 100 * time.Second
)

// TestBrowser drives the web UI in headless Chromium against a real daemon
// and the fake model (web.test.mjs says what each case checks), and leaves
// a screenshot of each screen in dist/web-screens.
func TestBrowser(t *testing.T) {
	if testenv.Emulated() {
		t.Skip("the browser tests run natively only: Chromium does not run under user-mode emulation")
	}
	here, err := os.Getwd()
	require.NoError(t, err)
	need(t, here)
	root := filepath.Join(here, "..", "..", "..")
	bin := buildDaemon(t, root)
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()

	m := newModel()
	fake := llmtest.NewServer(llmtest.Ollama, m.handle)
	t.Cleanup(func() {
		close(m.closing)
		fake.Close()
	})
	dir := t.TempDir()
	port := freePort(t)
	writeDataDir(t, dir, port, fake.BaseURL())
	parent, child := seedSubagent(t, dir)
	daemon := startDaemon(ctx, t, bin, dir)
	// The port was free when it was chosen, but another test process may
	// have bound it first (a config cannot ask for port 0): start again on
	// another, up to five times.
	for try := 1; daemon == "" && try < 5; try++ {
		writeConfig(t, dir, freePort(t))
		daemon = startDaemon(ctx, t, bin, dir)
	}
	require.NotEmpty(t, daemon, "the daemon found no free port in five tries")

	proxy := startProxy(t, daemon)
	shots := filepath.Join(root, "dist", "web-screens")
	require.NoError(t, os.RemoveAll(shots)) // no screenshot of an earlier run is left
	require.NoError(t, os.MkdirAll(shots, 0o755))
	node := exec.CommandContext(ctx, "node", "web.test.mjs")
	node.Dir = here
	node.Env = append(os.Environ(),
		"WEB_URL="+proxy.URL(),
		"DAEMON_URL=http://"+daemon,
		"CONTROL_URL="+proxy.control(t, m.release),
		"API_TOKEN="+token,
		"CHROMIUM="+chromium,
		"SHOTS_DIR="+shots,
		"PARENT_ID="+parent,
		"CHILD_ID="+child,
	)
	out, err := node.CombinedOutput()
	t.Logf("web.test.mjs:\n%s", out)
	require.NoError(t, err, "the browser tests failed: see the lines marked FAIL above")
}

// buildDaemon builds agnx-lite from the tree as make build does (so the
// build cache serves it), with the go that runs this test.
func buildDaemon(t *testing.T, root string) string {
	goCmd := "go"
	if r := runtime.GOROOT(); r != "" && exists(filepath.Join(r, "bin", "go")) {
		goCmd = filepath.Join(r, "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "agnx-lite")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-o", bin, "./cmd/agnx-lite")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// need skips (or, under CI=true, fails) when what the tests run on is
// missing.
func need(t *testing.T, here string) {
	missing := ""
	switch {
	case !found("node"):
		missing = "node is not installed"
	case !exists(chromium):
		missing = chromium + " is missing"
	case !exists(filepath.Join(here, "node_modules", "playwright-core", "package.json")):
		missing = "playwright-core is not installed in lite/webui/e2e/node_modules"
	}
	if missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: run ci/web-peers.sh (make deps) to install it", missing)
	}
	t.Skipf("%s: run ci/web-peers.sh (make deps) to run the browser tests", missing)
}

func found(name string) bool { _, err := exec.LookPath(name); return err == nil }

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// writeDataDir writes a config with an API token (the sign-in case) and
// three agents: assistant and guarded on the fake model (guarded's policy
// asks before every tool call: the approval case), and offline, whose
// model server is a port nothing listens on.
func writeDataDir(t *testing.T, dir string, port int, modelURL string) {
	writeConfig(t, dir, port)
	dead := "http://127.0.0.1:" + strconv.Itoa(freePort(t))
	for _, name := range []string{"assistant", "guarded", "offline"} {
		a := filepath.Join(dir, "agents", name)
		base := modelURL
		if name == "offline" {
			base = dead
		}
		write(t, filepath.Join(a, "agent.yaml"), `apiVersion: agnx/v1alpha1
kind: Agent
metadata:
  name: `+name+`
  description: The `+name+` agent of the browser tests.
spec:
  model:
    provider: ollama
    name: qwen3:1.7b
    base_url: `+base+`
  soul: ./SOUL.md
  session:
    on_disconnect: continue
  tools:
    - type: builtin
      name: list_dir
`)
		write(t, filepath.Join(a, "SOUL.md"), "You answer briefly.\n")
	}
	write(t, filepath.Join(dir, "agents", "guarded", "policy.yaml"), "mode: ask\n")
}

// writeConfig writes agnx.yaml for the daemon on port.
func writeConfig(t *testing.T, dir string, port int) {
	cfg := "server:\n  host: 127.0.0.1\n  port: " + strconv.Itoa(port) + "\n  api_token: " + token +
		"\n  keep_alive_interval_seconds: 1\nsandbox:\n  mode: trust\n"
	write(t, filepath.Join(dir, "agnx.yaml"), cfg)
}

func write(t *testing.T, path, text string) {
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
}

// startDaemon runs agnx-lite serve and returns its host:port once its log
// says it is ready, or "" when it stopped because its port was in use. Its
// log is shown when the test fails.
func startDaemon(ctx context.Context, t *testing.T, bin, dir string) string {
	cmd := exec.CommandContext(ctx, bin, "serve", "-d", dir)
	// Out of time: stop it as a service manager would, then kill it.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	ready := make(chan string, 1)
	read := make(chan []string, 1)
	go func() {
		var lines []string
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var line struct{ Msg, URL string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "ready" {
				ready <- strings.TrimPrefix(line.URL, "http://")
			}
			lines = append(lines, sc.Text())
		}
		read <- lines
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		lines := <-read
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("daemon log:\n%s", strings.Join(lines, "\n"))
		}
	})
	select {
	case addr := <-ready:
		return addr
	case lines := <-read:
		read <- lines
		if strings.Contains(strings.Join(lines, "\n"), "address already in use") {
			return ""
		}
		t.Fatal("the daemon stopped before it was ready")
	case <-ctx.Done():
		t.Fatal("the daemon did not log ready before the test's time ran out")
	}
	return ""
}
