package lite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

// mcpServerBinary builds bench/memgate/mcpserver (a stdio MCP server on
// the Go SDK: echo, add, report) without cgo, as agnx-lite is built: a
// cgo binary's threads can fail to start under the sandbox's address-space
// limit. It skips, saying why, when the go tool is not there.
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

// mcpTestConfig is a data dir with the default agent, its sandbox
// bubblewrap where that works here, else trust (the wiring is under test,
// not the sandbox), and no memory guard (-race's resident set is past it).
func mcpTestConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	cfg.Runtime.MemoryLimitMB = 0
	if !bwrap.Probe(context.Background()).Usable {
		cfg.Sandbox.Mode = "trust"
	}
	return cfg
}
