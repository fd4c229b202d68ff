package sandbox

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// sandboxOf is the Manager behind an agent's bash tool.
func sandboxOf(t *testing.T, a *runtime.LoadedAgent) *Manager {
	t.Helper()
	for _, tool := range a.Tools {
		if b, ok := tool.(*tools.Bash); ok {
			return b.Sandbox.(*agentSandbox).s
		}
	}
	t.Fatal("the agent has no bash tool")
	return nil
}

func TestSandbox_WorkspaceCap(t *testing.T) {
	needSandbox(t)
	a := toolAgent(t, "bwrap", "    - {type: builtin, name: bash}\n    - {type: builtin, name: write_file}\n", nil)
	sandboxOf(t, a).cfg.WorkspaceMB = 2

	res := call(t, a, "bash", `{"command":"head -c 3000000 /dev/zero > big; echo rc=$?; stat -c %s big"}`)
	assert.Contains(t, res.Content, "File too large", "no file grows past the cap")
	assert.Contains(t, res.Content, "rc=1\n2097152\n")

	res = call(t, a, "write_file", `{"path":"note.txt","content":"hello"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "the workspace is full (sandbox.workspace_mb is 2 MB")

	res = call(t, a, "bash", `{"command":"echo x > small; echo rc=$?; rm big && echo removed"}`)
	assert.True(t, strings.HasPrefix(res.Content, "[the workspace is full"), res.Content)
	assert.Contains(t, res.Content, "rc=1\nremoved", "a full workspace lets nothing grow, but deleting works")

	res = call(t, a, "write_file", `{"path":"note.txt","content":"hello"}`)
	assert.False(t, res.IsError, res.Content)
	res = call(t, a, "bash", `{"command":"cat note.txt"}`)
	assert.Equal(t, "hello", res.Content)
}

func TestSandbox_RunAsByDefaultWhenRoot(t *testing.T) {
	needSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("sandbox.run_as applies to a daemon running as root")
	}
	a := toolAgent(t, "bwrap", "    - {type: builtin, name: bash}\n    - {type: builtin, name: write_file}\n", nil)
	// A file the daemon (root) wrote is the sandbox user's to change.
	res := call(t, a, "write_file", `{"path":"sub/notes.txt","content":"one\n"}`)
	require.False(t, res.IsError, res.Content)
	res = call(t, a, "bash", `{"command":"id -u; echo two >> sub/notes.txt && cat sub/notes.txt"}`)
	assert.Equal(t, "65534\none\ntwo\n", res.Content)

	// The process limit binds: a fork bomb fails to fork. It runs as a
	// user of its own (RLIMIT_NPROC counts every process of a uid: as
	// nobody it would starve every other test's sandbox meanwhile).
	b := toolAgent(t, "bwrap", "    - {type: builtin, name: bash}\n", nil)
	uid := strconv.Itoa(int(testenv.LoneUID()))
	sandboxOf(t, b).cfg.RunAs = uid + ":" + uid
	res = call(t, b, "bash", `{"command":"id -u; b() { b | b & }; b; sleep 1; echo survived","timeout_seconds":5}`)
	assert.Contains(t, res.Content, uid+"\n")
	assert.Contains(t, res.Content, "fork")
}

func TestSandbox_RunAsConfig(t *testing.T) {
	for in, want := range map[string]string{"": "65534:65534", "nobody": "65534:65534", "123:456": "123:456", "0:0": "", "root": ""} {
		u, err := resolveRunAs(in, 0)
		require.NoError(t, err, in)
		got := ""
		if u != nil {
			got = strconv.Itoa(int(u.UID)) + ":" + strconv.Itoa(int(u.GID))
		}
		assert.Equal(t, want, got, in)
	}
	u, err := resolveRunAs("nobody", 1000)
	assert.NoError(t, err)
	assert.Nil(t, u, "a daemon that is not root cannot switch users")
	_, err = resolveRunAs("no-such-user-here", 0)
	assert.ErrorContains(t, err, "a user this system does not have")

	_, err = config.Parse("agnx.yaml", []byte("sandbox:\n  run_as: \"1:x\"\n"))
	assert.ErrorContains(t, err, "agnx.yaml:2: sandbox.run_as \"1:x\" is neither a user name nor uid:gid")
	_, err = config.Parse("agnx.yaml", []byte("sandbox:\n  tmp_mb: 0\n"))
	assert.ErrorContains(t, err, "sandbox.tmp_mb 0 must be at least 1")
	_, err = config.Parse("agnx.yaml", []byte("sandbox:\n  workspace_mb: -1\n"))
	assert.ErrorContains(t, err, "sandbox.workspace_mb")
}

func TestPrepareWorkspace(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a"), make([]byte, 3<<20), 0o644))
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "big"), make([]byte, 8<<20), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "link")))
	require.NoError(t, os.Link(filepath.Join(outside, "big"), filepath.Join(ws, "hard")))

	room, err := prepareWorkspace(ws, 100, nil)
	require.NoError(t, err)
	assert.InDelta(t, 100-3-8, room, 1, "the hard link counts, what the symlink points to does not")
	room, err = prepareWorkspace(ws, 5, nil)
	require.NoError(t, err)
	assert.LessOrEqual(t, room, 0, "full")
	room, err = prepareWorkspace(filepath.Join(ws, "missing"), 5, nil)
	require.NoError(t, err)
	assert.Equal(t, 5, room)

	deep := filepath.Join(ws, "deep")
	for range maxWorkspaceDepth + 2 {
		deep = filepath.Join(deep, "d")
	}
	require.NoError(t, os.MkdirAll(deep, 0o755))
	room, err = prepareWorkspace(ws, 100, nil)
	require.NoError(t, err)
	assert.Zero(t, room, "a tree too deep to measure counts as full")

	if os.Geteuid() == 0 {
		owner := &bwrap.User{UID: 65534, GID: 65534}
		_, err = prepareWorkspace(ws, 0, owner)
		require.NoError(t, err)
		for _, p := range []string{ws, filepath.Join(ws, "a"), filepath.Join(ws, "deep", "d")} {
			st, err := os.Lstat(p)
			require.NoError(t, err)
			assert.EqualValues(t, 65534, st.Sys().(*syscall.Stat_t).Uid, p)
		}
		for _, p := range []string{outside, filepath.Join(outside, "big")} {
			st, err := os.Lstat(p)
			require.NoError(t, err)
			assert.EqualValues(t, 0, st.Sys().(*syscall.Stat_t).Uid, "%s is outside: never handed over", p)
		}
	}
}

func TestSandbox_DiskFloor(t *testing.T) {
	needSandbox(t)
	a := toolAgent(t, "bwrap", "    - {type: builtin, name: bash}\n    - {type: builtin, name: write_file}\n", nil)
	s := sandboxOf(t, a)
	free, ok := freeMB(t.TempDir())
	require.True(t, ok)
	if free < 2000 {
		t.Skip("less than 2 GB free here")
	}

	s.diskFloorMB = free + 100 // the disk is "nearly full" already
	res := call(t, a, "bash", `{"command":"echo x > f; echo rc=$?"}`)
	assert.True(t, strings.HasPrefix(res.Content, "[the disk holding the workspace has less than"), res.Content)
	assert.Contains(t, res.Content, "rc=1")
	res = call(t, a, "write_file", `{"path":"note.txt","content":"hello"}`)
	assert.Contains(t, res.Content, "error: the disk holding the workspace has less than")

	// A command that writes many files, each under the per-file limit,
	// is stopped once the disk goes under the floor.
	// Stopped, not timed out and not finished: the sleep after the writes
	// outlasts any check, so only the floor ends it (a bound on the wall
	// time said the same, and failed on a loaded box under qemu).
	s.diskFloorMB = free - 300 // a margin for what other processes write meanwhile
	res = call(t, a, "bash", `{"command":"for i in $(seq 1 700); do head -c 1000000 /dev/zero > f$i || break; done; sleep 600","timeout_seconds":900}`)
	assert.True(t, strings.HasPrefix(res.Content, "[stopped: the disk holding the workspace has less than"), res.Content)
	assert.True(t, res.IsError)
}

// TestSandbox_ReserveGone: while the database uses its disk reserve (the
// disk filled up), writing tools refuse and sandboxed commands can grow no
// file, so what is left of the disk stays for the conversation.
func TestSandbox_ReserveGone(t *testing.T) {
	needSandbox(t)
	a := toolAgent(t, "bwrap", "    - {type: builtin, name: bash}\n    - {type: builtin, name: write_file}\n", nil)
	s := sandboxOf(t, a)
	gone := true
	s.reserveGone = func() bool { return gone }

	res := call(t, a, "write_file", `{"path":"note.txt","content":"hello"}`)
	assert.Contains(t, res.Content, "error: the disk holding the data dir filled up")
	res = call(t, a, "bash", `{"command":"echo x > f; echo rc=$?"}`)
	assert.Contains(t, res.Content, "rc=1", "no file may grow while the reserve is gone")

	gone = false
	res = call(t, a, "write_file", `{"path":"note.txt","content":"hello"}`)
	assert.NotContains(t, res.Content, "error:")
	res = call(t, a, "bash", `{"command":"echo x > f; echo rc=$?"}`)
	assert.Contains(t, res.Content, "rc=0")
}

// A workspace with more entries than the walk measures (a big
// node_modules) is not full for that: what the walk saw counts.
func TestPrepareWorkspace_ManyEntries(t *testing.T) {
	ws := t.TempDir()
	const bound = 2_000 // maxWorkspaceEntries is 200,000: the same walk, a hundredth of the files
	for d := range bound/1000 + 1 {
		dir := filepath.Join(ws, strconv.Itoa(d))
		require.NoError(t, os.Mkdir(dir, 0o755))
		for f := range 1000 {
			require.NoError(t, os.WriteFile(filepath.Join(dir, strconv.Itoa(f)), nil, 0o644))
		}
	}
	room, err := prepareWorkspaceUpTo(ws, 1024, nil, bound)
	require.NoError(t, err)
	assert.Greater(t, room, 900, "empty files take no room: not full")
}

// A probe the machine was too busy to answer is not kept: the next use
// probes again, and the answer that comes is kept.
func TestManager_SlowProbeIsTriedAgain(t *testing.T) {
	cfg := &config.Config{DataDir: t.TempDir()}
	cfg.Sandbox.Mode = "bwrap"
	s := New(Options{Config: cfg.Sandbox, DataDir: cfg.DataDir, Logger: slog.New(slog.DiscardHandler)})
	defer s.Close()
	answers := []bwrap.Status{{Slow: true, Problem: "too busy"}, {Usable: true}}
	probes := 0
	s.probeWith = func(context.Context) bwrap.Status {
		probes++
		return answers[min(probes, len(answers))-1]
	}
	assert.Equal(t, "too busy", s.probe().Problem)
	assert.True(t, s.probe().Usable, "probed again")
	assert.True(t, s.probe().Usable)
	assert.Equal(t, 2, probes, "a real answer is kept")
}

// A skill folder swapped for a link after the load is not mounted.
func TestSkills_MountsOnlyRealFolders(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "skills", "a")
	require.NoError(t, os.MkdirAll(real, 0o755))
	swapped := filepath.Join(base, "skills", "b")
	require.NoError(t, os.Symlink(base, swapped))
	assert.Equal(t, []string{real}, skillMounts([]string{real, swapped, filepath.Join(base, "gone")}))
}
