package main

import (
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/bwrap"
)

func TestMain(m *testing.M) {
	bwrap.Init() // the test binary is the sandbox's init, as agnx-lite is
	os.Exit(m.Run())
}

// mcpServerBinary builds bench/memgate/mcpserver, a stdio MCP server on
// the Go SDK, without cgo (as agnx-lite is built); it skips, saying why,
// when the go tool is not there.
func mcpServerBinary(t *testing.T) string {
	t.Helper()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH, so the test MCP server cannot be built")
	}
	out := filepath.Join(t.TempDir(), "mcpserver")
	cmd := exec.Command(gotool, "build", "-o", out, "github.com/agnx-lite/agnx-lite/bench/memgate/mcpserver")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goruntime.GOOS, "GOARCH="+goruntime.GOARCH)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "build the test MCP server: %s", msg)
	return out
}

// mcpCLI is a CLI whose assistant declares the MCP servers given as
// spec.tools lines; tools run unconfined (the sandbox is lite's to test).
func mcpCLI(t *testing.T, tools string) *cli {
	c := newCLI(t)
	require.NoError(t, os.WriteFile(c.cfg, []byte("server:\n  port: "+strconv.Itoa(c.port)+"\nsandbox:\n  mode: trust\n"), 0o600))
	code, _, errs := c.run("run", "-m", "hi") // writes the data dir on first start
	require.Equal(t, 0, code, errs)
	yaml := filepath.Join(c.dir, "agents", "assistant", "agent.yaml")
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	spec := string(data)
	if tools != "" {
		i := strings.Index(spec, "  tools:")
		require.GreaterOrEqual(t, i, 0, spec)
		spec = spec[:i] + "  tools:\n" + tools + spec[i+len("  tools:\n"):]
	}
	require.NoError(t, os.WriteFile(yaml, []byte(spec), 0o644))
	return c
}

func TestCLI_MCPListAndTest(t *testing.T) {
	exe := mcpServerBinary(t)
	c := mcpCLI(t, "    - {type: mcp, name: probe, command: "+exe+"}\n"+
		"    - {type: mcp, name: broken, command: /bin/false}\n")

	code, out, errs := c.run("mcp", "list", "assistant", "--connect")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "probe (stdio "+exe+")\n  probe__add\tAdds two numbers.\n  probe__echo\tEchoes its text.\n")
	assert.Contains(t, out, "broken (stdio /bin/false)\n  ! ")

	code, out, errs = c.run("mcp", "test", "assistant", "probe", "--call", "echo", "--args", `{"text": "hi"}`)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "ok    probe: 3 tools in ")
	assert.Contains(t, out, "echo: hi\n")

	code, out, errs = c.run("mcp", "test", "assistant", "broken")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "FAIL  broken: ")
	assert.Contains(t, errs, "MCP server broken could not be reached")

	code, _, errs = c.run("mcp", "test", "assistant", "ghost")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `agent assistant has no MCP server "ghost"`)

	code, _, errs = c.run("mcp", "test", "assistant", "probe", "--call", "nope")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `MCP server probe has no tool "nope" (it has: probe__add, probe__echo, probe__report)`)

	code, _, errs = c.run("mcp", "test", "assistant", "--call", "echo")
	assert.Equal(t, 2, code, "--call needs the server")
	assert.Contains(t, errs, "--call needs the SERVER")

	code, _, _ = c.run("mcp", "list")
	assert.Equal(t, 2, code)
}

func TestCLI_MCPNoServers(t *testing.T) {
	c := mcpCLI(t, "")
	code, out, errs := c.run("mcp", "list", "assistant")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "agent assistant has no MCP servers")
	code, _, errs = c.run("mcp", "test", "assistant")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "has no MCP servers")
}

// serve status shows the daemon's MCP servers, their state and memory, and
// the daemon's own memory apart; doctor shows their state too.
func TestCLI_ServeStatusShowsMCP(t *testing.T) {
	c := mcpCLI(t, "    - {type: mcp, name: probe, command: "+mcpServerBinary(t)+"}\n")
	c.serve()
	code, out, errs := c.run("run", "-m", `use probe__echo {"text":"hi"}`)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "probe__echo said: echo: hi\n", out)

	code, out, errs = c.run("serve", "status")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `memory +\d+\.\d MiB \(agnx-lite itself; MCP servers apart\)\n`, out)
	assert.Regexp(t, `mcp assistant/probe +running, pid \d+, \d+\.\d MiB, 3 tools, \d+ calls, 0 failed, 0 restarts\n`, out)
	assert.Regexp(t, `mcp memory +\d+\.\d MiB \(all running MCP servers\)\n`, out)

	_, out, _ = c.run("doctor")
	assert.Regexp(t, `stdio: \S+mcpserver; in the daemon: running \(pid \d+, \d+\.\d MiB\)`, out)
}
