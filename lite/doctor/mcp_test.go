package doctor

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

// A daemon that runs but does not answer its status is said so on the
// MCP server's line, not left out as if no daemon ran.
func TestDaemonMCP_SilentDaemonIsSaid(t *testing.T) {
	cfg := testConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	assert.Equal(t, daemonState{}, daemonMCP(context.Background(), cfg), "no daemon: nothing to say")

	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	data, err := json.Marshal(config.Daemon{PID: os.Getpid(), URL: broken.URL})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg.DaemonFile(), data, 0o600))

	st := daemonMCP(context.Background(), cfg)
	require.Error(t, st.err)
	assert.Contains(t, st.err.Error(), "the daemon did not answer: ")
	assert.Empty(t, st.servers)
}

// doctor lists each agent's MCP servers: a missing program and an entry
// that would refuse the agent are said; agnx.yaml's servers come first.
func TestDoctor_MCPServers(t *testing.T) {
	cfg := testConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(405) }))
	defer srv.Close()
	cfg.MCP.Servers = []agents.ToolRef{{Type: "mcp", Name: "docs", URL: srv.URL + "/mcp"}}
	setSpec(t, filepath.Join(cfg.AgentsDir, "assistant"), "  tools:\n"+
		"    - {type: mcp, name: sh, command: sh}\n"+
		"    - {type: mcp, name: gone, command: no-such-program-4711}\n"+
		"    - {type: mcp, name: leak, command: sh, env: {K: '${env:AWS_SECRET}'}}\n"+
		"    - {type: mcp, name: mine, url: '"+srv.URL+"'}\n")
	got := map[string]Check{}
	for _, c := range mcpChecks(context.Background(), cfg, loadAll(t, cfg)) {
		got[c.Name] = c
	}
	assert.Equal(t, "ok", got["mcp assistant/docs"].Status, got["mcp assistant/docs"].Detail)
	assert.Contains(t, got["mcp assistant/docs"].Detail, "answers (HTTP 405)")
	assert.Equal(t, "ok", got["mcp assistant/sh"].Status)
	assert.Equal(t, "warn", got["mcp assistant/gone"].Status)
	assert.Contains(t, got["mcp assistant/gone"].Detail, "not on this host's PATH")
	assert.Equal(t, "fail", got["mcp assistant/leak"].Status)
	assert.Contains(t, got["mcp assistant/leak"].Detail, "sandbox.env")
	assert.Equal(t, "warn", got["mcp assistant/mine"].Status, "an agent's server on loopback needs allow_private")
	assert.Contains(t, got["mcp assistant/mine"].Detail, "allow_private")
}

func loadAll(t *testing.T, cfg *config.Config) []*agents.Agent {
	t.Helper()
	a, err := agents.Load(filepath.Join(cfg.AgentsDir, "assistant"))
	require.NoError(t, err)
	return []*agents.Agent{a}
}
