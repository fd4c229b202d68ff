package lite

import (
	"os"
	"testing"

	"github.com/agnx-lite/agnx-lite/bwrap"
)

func TestMain(m *testing.M) {
	bwrap.Init() // the test binary is the sandbox's init, as agnx-lite is
	if os.Getenv(scriptPluginEnv) != "" {
		os.Exit(runScriptPlugin()) // the test binary is a gateway plugin
	}
	if os.Getenv(testMCPEnv) != "" {
		os.Exit(runTestMCPServer()) // the test binary is a stdio MCP server
	}
	os.Exit(m.Run())
}
