package sandbox

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// overrideTools are bash, write_file and a CLI tool that writes where it
// runs: what a subagent could change its parent's workspace with.
const overrideTools = "    - {type: builtin, name: bash}\n    - {type: builtin, name: write_file}\n" +
	"    - {type: cli, name: scribble, command: ./scribble.sh}\n"

var scribble = map[string]string{"scribble.sh": "#!/bin/sh\necho cli > /workspace/cli.txt; echo rc=$?\n"}

// callIn runs one of a's tools as a call working in dir (a subagent's).
func callIn(t *testing.T, a *runtime.LoadedAgent, dir string, readOnly bool, name, args string) runtime.Result {
	t.Helper()
	ctx := runtime.WithCall(context.Background(), runtime.CallInfo{SessionID: "s_child", CallID: "c1",
		Parent: "s_parent", Workspace: dir, ReadOnly: readOnly})
	for _, tool := range a.Tools {
		if tool.Spec().Name == name {
			res, err := tool.Run(ctx, []byte(args))
			require.NoError(t, err)
			return res
		}
	}
	t.Fatalf("agent has no tool %s", name)
	return runtime.Result{}
}

// parentWorkspace is a folder standing for a parent's workspace, which
// the sandbox user may write to (as the parent's own commands do).
func parentWorkspace(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "parent")
	require.NoError(t, os.MkdirAll(dir, 0o777))
	require.NoError(t, os.Chmod(dir, 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.txt"), []byte("parent's\n"), 0o666))
	return dir
}

// In bwrap, a read-only override is bound read-only: bash and CLI tools
// read it and cannot change it, /tmp is theirs; write_file refuses. A
// writable override is where they write instead of the agent's own.
func TestSandbox_WorkspaceOverride(t *testing.T) {
	needSandbox(t)
	a := toolAgent(t, "bwrap", overrideTools, scribble)
	parent := parentWorkspace(t)

	res := callIn(t, a, parent, true, "bash", `{"command":"pwd; cat p.txt; echo x > p.txt; echo rc=$?; touch new; echo rc=$?; echo tmp > /tmp/t && cat /tmp/t"}`)
	assert.Contains(t, res.Content, "/workspace\nparent's\n")
	assert.Contains(t, res.Content, "Read-only file system")
	assert.Contains(t, res.Content, "rc=1\n")
	assert.NotContains(t, res.Content, "rc=0")
	assert.Contains(t, res.Content, "tmp\n", "/tmp is writable")
	res = callIn(t, a, parent, true, "scribble", `{}`)
	assert.Contains(t, res.Content, "Read-only file system")
	res = callIn(t, a, parent, true, "write_file", `{"path":"w.txt","content":"x"}`)
	assert.True(t, res.IsError)
	assert.Equal(t, tools.ReadOnlyRefusal, res.Content)
	data, err := os.ReadFile(filepath.Join(parent, "p.txt"))
	require.NoError(t, err)
	assert.Equal(t, "parent's\n", string(data))
	for _, f := range []string{"new", "cli.txt", "w.txt"} {
		assert.NoFileExists(t, filepath.Join(parent, f))
	}

	res = callIn(t, a, parent, false, "bash", `{"command":"echo x > made.txt; echo rc=$?"}`)
	assert.Equal(t, "rc=0\n", res.Content)
	res = callIn(t, a, parent, false, "scribble", `{}`)
	assert.Equal(t, "rc=0\n", res.Content)
	res = callIn(t, a, parent, false, "write_file", `{"path":"w.txt","content":"x"}`)
	assert.False(t, res.IsError, res.Content)
	for _, f := range []string{"made.txt", "cli.txt", "w.txt"} {
		assert.FileExists(t, filepath.Join(parent, f))
		assert.NoFileExists(t, filepath.Join(a.Spec.Workspace, f), "not the agent's own workspace")
	}
}

// Trust mode cannot make a folder read-only: bash and CLI tools refuse a
// read-only override, and run in a writable one.
func TestSandbox_WorkspaceOverrideTrust(t *testing.T) {
	a := toolAgent(t, "trust", overrideTools, scribble)
	parent := parentWorkspace(t)
	for _, name := range []string{"bash", "scribble"} {
		res := callIn(t, a, parent, true, name, `{"command":"echo x > p.txt"}`)
		assert.True(t, res.IsError, name)
		assert.Contains(t, res.Content, "sandbox.mode is trust, which cannot keep a command from writing to a read-only workspace", name)
	}
	data, _ := os.ReadFile(filepath.Join(parent, "p.txt"))
	assert.Equal(t, "parent's\n", string(data))

	res := callIn(t, a, parent, false, "bash", `{"command":"pwd"}`)
	assert.Equal(t, parent+"\n", res.Content)
}

// runBackground starts a command as background_process does, in a call
// working in dir, and returns what it printed.
func runBackground(t *testing.T, a *runtime.LoadedAgent, dir string, readOnly bool, script string) (string, error) {
	t.Helper()
	ctx := runtime.WithCall(context.Background(), runtime.CallInfo{SessionID: "s_child", CallID: "c1",
		Workspace: dir, ReadOnly: readOnly})
	start := sandboxOf(t, a).ForBackground(a.Spec, false)
	p, err := start(ctx, "/workspace", []string{"/bin/sh", "-c", script})
	if err != nil {
		return "", err
	}
	_ = p.Stdin.Close()
	out, err := io.ReadAll(p.Stdout)
	require.NoError(t, err)
	require.NoError(t, p.Wait())
	return string(out), nil
}

// A background process of a subagent runs in the call's folder, bound
// read-only when the call is; trust mode refuses a read-only one.
func TestSandbox_BackgroundOverride(t *testing.T) {
	needSandbox(t)
	a := toolAgent(t, "bwrap", overrideTools, scribble)
	parent := parentWorkspace(t)
	out, err := runBackground(t, a, parent, true, "cat p.txt; echo x > p.txt; echo rc=$?")
	require.NoError(t, err)
	assert.Contains(t, out, "parent's\nrc=")
	assert.NotContains(t, out, "rc=0", "the write failed")
	data, _ := os.ReadFile(filepath.Join(parent, "p.txt"))
	assert.Equal(t, "parent's\n", string(data))

	out, err = runBackground(t, a, parent, false, "echo bg > bg.txt; echo rc=$?")
	require.NoError(t, err)
	assert.Equal(t, "rc=0\n", out)
	assert.FileExists(t, filepath.Join(parent, "bg.txt"))

	sandboxOf(t, a).cfg.Mode = "trust"
	_, err = runBackground(t, a, parent, true, "echo x > p.txt")
	require.ErrorIs(t, err, bwrap.ErrTrustReadOnly)
}
