package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

func TestMain(m *testing.M) {
	bwrap.Init() // the test binary is the sandbox's init, as agnx-lite is
	os.Exit(m.Run())
}

func needSandbox(t *testing.T) {
	testenv.SkipIfNoReexec(t, "bwrap runs the re-executed test binary as the sandbox's init")
	if st := bwrap.Probe(context.Background()); !st.Usable {
		t.Skip("bubblewrap unusable here: " + st.Problem)
	}
}

// toolAgent writes an agent with the given spec.tools lines and builds
// the tools that run in a sandbox as lite's tool factory does
// (lite/toolset: toolset.go, cli.go), over a Manager of mode with agnx.yaml's
// defaults otherwise: bash, write_file, and cli tools whose command is a
// file of the agent's folder. Its workspace is where lite puts it.
func toolAgent(t *testing.T, mode string, toolsYAML string, files map[string]string) *runtime.LoadedAgent {
	t.Helper()
	dataDir := t.TempDir()
	cfg := config.Default()
	cfg.Sandbox.Mode = mode
	s := New(Options{Config: cfg.Sandbox, DataDir: dataDir})
	t.Cleanup(s.Close)
	dir, err := agents.WriteTemplate(filepath.Join(dataDir, "agents"), "assistant")
	require.NoError(t, err)
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o755))
	}
	yaml := filepath.Join(dir, agents.FileName)
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	i := strings.Index(string(data), "  tools:")
	require.Positive(t, i)
	require.NoError(t, os.WriteFile(yaml, []byte(string(data[:i])+"  tools:\n"+toolsYAML), 0o644))
	a, err := agents.Load(dir)
	require.NoError(t, err)
	a.Workspace = filepath.Join(dataDir, "workspaces", a.Name)
	require.NoError(t, os.MkdirAll(a.Workspace, 0o700))
	loaded := &runtime.LoadedAgent{Spec: a}
	for _, ref := range a.Tools {
		loaded.Tools = append(loaded.Tools, sandboxedTool(t, s, a, ref))
	}
	return loaded
}

// sandboxedTool is one tool of toolAgent's, made as the tool factory
// makes it.
func sandboxedTool(t *testing.T, s *Manager, a *agents.Agent, ref agents.ToolRef) runtime.Tool {
	t.Helper()
	ws := a.Workspace
	switch {
	case ref.Type == "builtin" && ref.Name == "bash":
		return &tools.Bash{Sandbox: s.ForAgent(a, ref.Network), MaxTimeout: time.Duration(ref.TimeoutSeconds) * time.Second}
	case ref.Type == "builtin" && ref.Name == "write_file":
		return s.Capped(ws, &tools.WriteFile{Workspace: ws})
	case ref.Type == "cli":
		return &tools.CLI{Name: ref.Name, Description: "CLI tool: " + ref.Name, Dir: a.Dir, ReadOnly: []string{a.Dir},
			Command: []string{filepath.Join(a.Dir, ref.Command)}, Sandbox: s.ForAgent(a, ref.Network), Timeout: tools.DefaultTimeout}
	}
	t.Fatalf("toolAgent makes no %s tool %s", ref.Type, ref.Name)
	return nil
}

// call runs one of a's tools, as lite's tests do.
func call(t *testing.T, a *runtime.LoadedAgent, name, args string) runtime.Result {
	t.Helper()
	for _, tool := range a.Tools {
		if tool.Spec().Name == name {
			res, err := tool.Run(context.Background(), []byte(args))
			require.NoError(t, err)
			return res
		}
	}
	t.Fatalf("agent has no tool %s", name)
	return runtime.Result{}
}
