package lite

import (
	"context"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// peers is where ci/mcp-peers.sh installs the reference MCP servers; the
// test skips, saying why, when node or they are missing.
func peers(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the reference MCP servers cannot run (install Node.js, then make deps)")
	}
	dir = os.Getenv("MCP_PEERS_DIR")
	if dir == "" {
		dir, err = filepath.Abs(filepath.Join("..", ".peers"))
		require.NoError(t, err)
	}
	for _, p := range []string{"server-everything", "server-filesystem"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", p, "dist", "index.js")); err != nil {
			t.Skipf("@modelcontextprotocol/%s is not installed in %s: run make deps (ci/mcp-peers.sh)", p, dir)
		}
	}
	return node, dir
}

// The reference servers from npm run as stdio servers through the real
// wiring (agnx.yaml's entries, the agent cache, the sandbox), and a tool
// of each answers.
func TestMCP_ReferenceServers(t *testing.T) {
	node, dir := peers(t)
	cfg := mcpTestConfig(t)
	mods := filepath.Join(dir, "node_modules", "@modelcontextprotocol")
	cfg.MCP.CallTimeoutSeconds = 60
	cfg.MCP.Servers = []agents.ToolRef{
		{Type: "mcp", Name: "everything", Command: node, Args: []string{filepath.Join(mods, "server-everything", "dist", "index.js"), "stdio"},
			ReadOnly: []string{dir}},
		{Type: "mcp", Name: "files", Command: node, Args: []string{filepath.Join(mods, "server-filesystem", "dist", "index.js"), "."},
			ReadOnly: []string{dir}},
	}
	ws := cfg.WorkspaceDir("assistant")
	require.NoError(t, os.MkdirAll(ws, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("buy milk\n"), 0o600))
	c := agentcache.NewStandalone(cfg, slog.New(slog.DiscardHandler))
	defer c.Close()
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	require.Empty(t, a.Spec.Warnings, "both servers listed")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	call := func(name, args string) runtime.Result {
		t.Helper()
		for _, tl := range a.Tools {
			if tl.Spec().Name == name {
				res, err := tl.Run(ctx, []byte(args))
				require.NoError(t, err)
				require.False(t, res.IsError, res.Content)
				return res
			}
		}
		require.Failf(t, "no such tool", "%s", name)
		return runtime.Result{}
	}
	assert.Contains(t, call("everything__echo", `{"message": "hello peers"}`).Content, "hello peers")
	assert.Contains(t, call("everything__get-sum", `{"a": 2, "b": 40}`).Content, "42")
	assert.Contains(t, call("files__list_directory", `{"path": "."}`).Content, "notes.txt")
	assert.Contains(t, call("files__read_text_file", `{"path": "notes.txt"}`).Content, "buy milk")

	stats := c.Tools().MCP().Stats()
	require.Len(t, stats, 2)
	for _, s := range stats {
		assert.True(t, s.Running, s.Server)
		assert.Positive(t, s.RSS, "a node server's memory is reported: %s", s.Server)
		t.Logf("%s: %.1f MiB", s.Server, float64(s.RSS)/(1<<20))
	}
}
