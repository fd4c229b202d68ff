package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/bwrap"
)

// TestStdio_InBubblewrap runs the test server in a real sandbox, as
// lite/sandbox's SpawnMCP does: workspace mounted, its own pid namespace,
// the environment only what the entry gives.
func TestStdio_InBubblewrap(t *testing.T) {
	srv := stdioServer(t, "s", "plain")
	if st := bwrap.Probe(context.Background()); !st.Usable {
		t.Skip("bubblewrap unusable here: " + st.Problem)
	}
	ws := t.TempDir()
	require.NoError(t, os.Chmod(ws, 0o777))
	spawn := func(ctx context.Context, workspace string, s Server) (*bwrap.Process, error) {
		p := bwrap.Policy{Workspace: workspace, Env: s.Env, ReadOnly: []string{filepath.Dir(s.Command)}, Limits: testLimits}
		return (&bwrap.Runner{}).Start(ctx, p, append([]string{s.Command}, s.Args...))
	}
	t.Setenv("AGNX_SECRET_FOR_TEST", "leak")
	m := newManager(t, Options{Spawn: spawn, Env: modeEnv("plain")})
	tools, warns := m.Tools(context.Background(), "a", ws, []Server{srv})
	require.Empty(t, warns)
	res, err := run(t, find(t, tools, "s__echo"), `{"text":"sandboxed"}`)
	require.NoError(t, err)
	assert.Contains(t, res.Content, "sandboxed")
	res, err = run(t, find(t, tools, "s__pid"), `{}`)
	require.NoError(t, err)
	pid, err := strconv.Atoi(res.Content)
	require.NoError(t, err)
	assert.Less(t, pid, 10, "the server has a pid namespace of its own")
	res, err = run(t, find(t, tools, "s__env"), `{}`)
	require.NoError(t, err)
	assert.Contains(t, res.Content, serverEnv+"=plain", "the entry's env, expanded")
	assert.NotContains(t, res.Content, "AGNX_SECRET_FOR_TEST", "nothing of the daemon's environment")
	st := statOf(m, "s")
	assert.Positive(t, st.RSS, "the sandbox's process tree is measured from bwrap down")
}
