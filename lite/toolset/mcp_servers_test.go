package toolset

import (
	"context"
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

// mcpAgent is a loaded agent whose folder holds files (name -> mode).
func mcpAgent(t *testing.T, files map[string]os.FileMode) *agents.Agent {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "agent")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, mode := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), mode))
	}
	return &agents.Agent{Name: "agent", Dir: dir}
}

// An agent's entry may name only what sandbox.env offers, in any of the
// forms the manager expands; agnx.yaml's entries may name anything.
func TestMCPServer_EnvRefsOfAnAgent(t *testing.T) {
	cfg := config.Default()
	cfg.Sandbox.Env = map[string]config.Secret{"GH_TOKEN": "x"}
	a := mcpAgent(t, nil)
	for _, v := range []string{"${env:AWS_SECRET}", "Bearer ${AWS_SECRET}", "$AWS_SECRET", "${AWS_SECRET:-x}", "a$AWS_SECRET-b"} {
		for _, ref := range []agents.ToolRef{
			{Type: "mcp", Name: "s", Command: "npx", Env: agents.ToolEnv{Values: map[string]string{"K": v}}},
			{Type: "mcp", Name: "s", URL: "https://h/", Headers: map[string]string{"Authorization": v}},
		} {
			_, err := MCPServer(cfg, a, ref, true)
			require.Error(t, err, v)
			assert.Contains(t, err.Error(), "names the variable AWS_SECRET, which sandbox.env in agnx.yaml does not offer")
			assert.Contains(t, err.Error(), "add AWS_SECRET: ${AWS_SECRET} under sandbox.env")
			_, err = MCPServer(cfg, a, ref, false)
			assert.NoError(t, err, "agnx.yaml's entries are the operator's")
		}
	}
	ok := agents.ToolRef{Type: "mcp", Name: "gh", Command: "npx", Env: agents.ToolEnv{Names: []string{"GH_TOKEN", "TZ"}}}
	s, err := MCPServer(cfg, a, ok, true)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"GH_TOKEN": "${env:GH_TOKEN}", "TZ": "${env:TZ}"}, s.Env)
	assert.Equal(t, "stdio", s.Transport)
	assert.Equal(t, "npx", s.Command, "a bare name not in the folder is a program on PATH")
	assert.Empty(t, s.ReadOnly)
}

func TestMCPServer_CommandAndReadOnly(t *testing.T) {
	cfg := config.Default()
	cfg.MCP.ReadOnly = []string{"/opt/mcp"}
	a := mcpAgent(t, map[string]os.FileMode{"bin/server": 0o755, "plain": 0o644, "lib/x.js": 0o644})
	s, err := MCPServer(cfg, a, agents.ToolRef{Name: "s", Command: "bin/server", ReadOnly: []string{"lib", "/opt/mcp/node"}}, true)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(a.Dir, "bin/server"), s.Command)
	real, _ := filepath.EvalSymlinks(filepath.Join(a.Dir, "lib"))
	assert.Equal(t, []string{a.Dir, real, "/opt/mcp/node"}, s.ReadOnly, "a command inside the folder gets the folder")

	cases := map[string]struct {
		ref  agents.ToolRef
		want string
	}{
		"outside":      {agents.ToolRef{Command: "../x"}, "a server's command is a program on PATH"},
		"not exec":     {agents.ToolRef{Command: "./plain"}, "is not an executable file"},
		"missing file": {agents.ToolRef{Command: "bin/none"}, "is not an executable file"},
		"abs missing":  {agents.ToolRef{Command: "/nonexistent/server"}, "is not an executable file"},
		"read host":    {agents.ToolRef{Command: "npx", ReadOnly: []string{"/root/.ssh"}}, "add it (or a folder above it) to mcp.read_only"},
		"read sibling": {agents.ToolRef{Command: "npx", ReadOnly: []string{"/opt/mcpx"}}, "mcp.read_only"},
		"read escapes": {agents.ToolRef{Command: "npx", ReadOnly: []string{"lib/../../x"}}, "is not a path inside the agent's folder"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			c.ref.Name = "s"
			_, err := MCPServer(cfg, a, c.ref, true)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	s, err = MCPServer(cfg, a, agents.ToolRef{Name: "g", Command: "npx", ReadOnly: []string{"/root/x"}}, false)
	require.NoError(t, err, "agnx.yaml's read_only is the operator's")
	assert.Equal(t, []string{"/root/x"}, s.ReadOnly)
}

func TestMCPEntries_AgentWinsOverGlobal(t *testing.T) {
	cfg := config.Default()
	cfg.MCP.Servers = []agents.ToolRef{{Type: "mcp", Name: "fs", Command: "global-fs"}, {Type: "mcp", Name: "web", URL: "https://w/"}}
	a := &agents.Agent{Tools: []agents.ToolRef{{Type: "builtin", Name: "bash"}, {Type: "mcp", Name: "fs", Command: "mine"}}}
	refs, own := MCPEntries(cfg, a)
	require.Len(t, refs, 2)
	assert.Equal(t, "web", refs[0].Name)
	assert.False(t, own[0])
	assert.Equal(t, "mine", refs[1].Command)
	assert.True(t, own[1])
}

func TestEnvRefs(t *testing.T) {
	assert.Equal(t, []string{"A", "B", "C", "D"}, envRefs("${env:A} ${B} $C ${D:-x} $$ $1 $"))
	assert.Empty(t, envRefs("plain"))
}

func FuzzEnvRefs(f *testing.F) {
	for _, s := range []string{"${env:A}", "${", "$", "$$A", "${A:-$B}", "x${env:}y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, n := range envRefs(s) {
			assert.LessOrEqual(t, len(n), len(s))
		}
	})
}

// An agent's url server on loopback is refused unless its entry says
// allow_private; agnx.yaml's servers are allowed.
func TestMCPTransport_RefusesPrivateAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	tr := newMCPTransport()
	defer tr.closeIdle()
	get := func() error {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL+"/mcp", nil)
		resp, err := tr.client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	err := get()
	require.Error(t, err)
	assert.ErrorIs(t, err, errMCPPrivate)
	tr.allow(srv.URL + "/other/path")
	assert.NoError(t, get(), "the origin was allowed")

	cfg := config.Default()
	cfg.MCP.Servers = []agents.ToolRef{{Type: "mcp", Name: "g", URL: srv.URL}}
	h := NewMCP(MCPOptions{Config: cfg})
	h.transport.mu.Lock()
	assert.True(t, h.transport.private[origin(srv.URL)], "agnx.yaml's servers may be private")
	h.transport.mu.Unlock()
	assert.Equal(t, "https://h.example:443", origin("HTTPS://H.example/x"))
	assert.Empty(t, origin("ftp://h/"))
}
