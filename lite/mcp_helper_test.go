package lite

import (
	"context"
	"log/slog"
	"os"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// testMCPEnv makes the test binary a stdio MCP server (TestMain).
const testMCPEnv = "AGNX_TEST_MCP"

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

// runTestMCPServer serves one tool, echo, on stdin/stdout, with a
// structured result beside its text.
func runTestMCPServer() int {
	s := sdk.NewServer(&sdk.Implementation{Name: "probe", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, echoOut, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, echoOut{Echo: in.Text}, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// mcpTestConfig is a data dir with the default agent, its sandbox
// bubblewrap where that works here, else trust (the wiring is under test,
// not the sandbox), and no memory guard (-race's resident set is past it).
func mcpTestConfig(t *testing.T) *Config {
	t.Helper()
	cfg := crashConfig(t.TempDir())
	_, err := Init(cfg)
	require.NoError(t, err)
	cfg.Runtime.MemoryLimitMB = 0
	sb := newSandboxes(cfg, slog.New(slog.DiscardHandler))
	if !sb.probe().Usable {
		cfg.Sandbox.Mode = "trust"
	}
	sb.close()
	return cfg
}

// testBinary is this test binary, which serves MCP with testMCPEnv set.
func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}
