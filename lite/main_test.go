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
	os.Exit(m.Run())
}
