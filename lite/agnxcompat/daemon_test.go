package agnxcompat

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
)

// The daemon under test is the real binary, built once per test run.
var (
	buildOnce sync.Once
	buildDir  string
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// agnxLite builds cmd/agnx-lite the first time a test needs it.
func agnxLite(t *testing.T) string {
	t.Helper()
	if testenv.Emulated() {
		t.Skip("the contract test builds and drives a daemon for the host; it runs natively, not under user-mode emulation")
	}
	buildOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			buildErr = errors.New("no go toolchain on PATH to build cmd/agnx-lite")
			return
		}
		if buildDir, buildErr = os.MkdirTemp("", "agnxcompat-bin-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "agnx-lite")
		cmd := exec.Command(goBin, "build", "-o", binPath, "github.com/agnx-lite/agnx-lite/cmd/agnx-lite")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/agnx-lite: %v: %s", err, out)
		}
	})
	if buildErr != nil && strings.HasPrefix(buildErr.Error(), "no go toolchain") {
		t.Skip(buildErr.Error())
	}
	require.NoError(t, buildErr)
	return binPath
}

// agentDef is one agent folder: agent.yaml text and its files.
type agentDef struct {
	folder string
	files  map[string]string // name ⇒ content, agent.yaml included
}

// daemonSpec is a workspace: the server keys of duragent.yaml and agents.
type daemonSpec struct {
	apiToken, adminToken string
	agents               []agentDef
}

// daemon is a running `agnx-lite serve -c duragent.yaml`.
type daemon struct {
	base      string
	workspace string
	cmd       *exec.Cmd
	exited    chan struct{}
	waitErr   error
	log       *lockedBuffer
	// discard is set on a daemon started again on another port: its log
	// is not printed.
	discard bool
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startDaemon writes the workspace and config, starts the binary on a free
// loopback port and waits until /readyz answers 200. It is stopped when
// the test ends; its log is printed if the test failed.
func startDaemon(t *testing.T, spec daemonSpec) *daemon {
	t.Helper()
	agnxLite(t) // builds it, or skips under emulation
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	for _, a := range spec.agents {
		folder := filepath.Join(ws, "agents", a.folder)
		require.NoError(t, os.MkdirAll(folder, 0o755))
		for name, content := range a.files {
			require.NoError(t, os.WriteFile(filepath.Join(folder, name), []byte(content), 0o644))
		}
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "workspace: %s\nserver:\n  host: 127.0.0.1\n  port: %s\n", ws, "PORT")
	if spec.apiToken != "" {
		fmt.Fprintf(&cfg, "  api_token: %s\n", spec.apiToken)
	}
	if spec.adminToken != "" {
		fmt.Fprintf(&cfg, "  admin_token: %s\n", spec.adminToken)
	}
	cfg.WriteString("sandbox:\n  mode: trust\n")
	cfgPath := filepath.Join(dir, "duragent.yaml")
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(home, 0o700))

	env := append(cleanEnv(), "HOME="+home, "OPENAI_API_KEY=sk-agnxcompat")
	d := startOnFreePort(t, env, func(port int) []string {
		yaml := strings.Replace(cfg.String(), "port: PORT", "port: "+strconv.Itoa(port), 1)
		require.NoError(t, os.WriteFile(cfgPath, []byte(yaml), 0o600))
		return []string{"serve", "-c", cfgPath}
	})
	d.workspace = ws
	return d
}

// cleanEnv is the test's environment without what would point the daemon
// elsewhere: its data dir, provider keys and hosts, HOME.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AGNX_") || strings.HasSuffix(k, "_API_KEY") || k == "OLLAMA_HOST" || k == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitReady polls /readyz: another process gives no signal to wait on.
func (d *daemon) waitReady() error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	hc := &http.Client{Timeout: time.Second}
	for {
		if resp, err := hc.Get(d.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-d.exited:
			return fmt.Errorf("the daemon exited before /readyz answered 200 (%v); its log:\n%s", d.waitErr, d.log.String())
		case <-deadline:
			return fmt.Errorf("/readyz did not answer 200 within 20 s; the daemon's log:\n%s", d.log.String())
		case <-tick.C:
		}
	}
}

// waitExit waits up to 15 s for the daemon to exit on its own.
func (d *daemon) waitExit() bool {
	select {
	case <-d.exited:
		return true
	case <-time.After(15 * time.Second):
		return false
	}
}

// stop sends SIGTERM, waits up to 10 s, then kills.
func (d *daemon) stop() {
	select {
	case <-d.exited:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
}
