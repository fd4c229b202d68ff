package workers

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agnx-lite/agnx-lite/bwrap"
)

func TestMain(m *testing.M) {
	bwrap.Init() // trust mode re-executes the test binary as the sandbox init
	code := m.Run()
	if agentBin != "" {
		_ = os.RemoveAll(filepath.Dir(agentBin))
	}
	os.Exit(code)
}

// testSandbox runs workers through bwrap.Runner, in trust mode unless
// isolated: what lite does, without its probes and workspace caps.
type testSandbox struct {
	r *bwrap.Runner
}

func (s testSandbox) Start(ctx context.Context, sp Spawn) (Process, error) {
	env := maps.Clone(sp.Env)
	if env == nil {
		env = map[string]string{}
	}
	env["HOME"] = sp.Home
	p := bwrap.Policy{Workspace: sp.Dir, Network: sp.Network, Env: env, SplitStderr: true, ReadOnly: sp.ReadOnly,
		Writable: []string{sp.Home}, Limits: bwrap.Limits{MemoryMB: 4096}}
	proc, err := s.r.Start(ctx, p, sp.Argv)
	if err != nil {
		return nil, err
	}
	inside := "/workspace"
	if s.r.Trust {
		inside = sp.Dir
	}
	return testProc{proc, inside}, nil
}

type testProc struct {
	p      *bwrap.Process
	inside string
}

func (p testProc) Stdin() io.WriteCloser { return p.p.Stdin }
func (p testProc) Stdout() io.ReadCloser { return p.p.Stdout }
func (p testProc) InsideDir() string     { return p.inside }
func (p testProc) Kill()                 { p.p.Kill() }
func (p testProc) Done() <-chan struct{} { return p.p.Done() }
func (p testProc) Stderr() []byte        { return p.p.Stderr() }

var trusted = testSandbox{r: &bwrap.Runner{Trust: true}}

var (
	agentOnce sync.Once
	agentBin  string
	agentErr  error
)

// testAgent builds testdata/acpagent once per test run.
func testAgent(t *testing.T) string {
	t.Helper()
	agentOnce.Do(func() {
		dir, err := os.MkdirTemp("", "acpagent-")
		if err != nil {
			agentErr = err
			return
		}
		agentBin = filepath.Join(dir, "acpagent")
		out, err := exec.Command("go", "build", "-o", agentBin, "./testdata/acpagent").CombinedOutput()
		if err != nil {
			agentErr = fmt.Errorf("build the test agent: %v: %s", err, out)
		}
	})
	if agentErr != nil {
		t.Fatal(agentErr)
	}
	return agentBin
}
