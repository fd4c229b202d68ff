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

// skipEmulated skips a test that needs what user-mode emulation cannot
// give: ci/test-qemu.sh sets AGNX_EMULATED, and there a re-executed test
// binary (a crash child, the sandbox's init) is a foreign ELF the host
// kernel will not run.
func skipEmulated(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("AGNX_EMULATED") != "" {
		t.Skip(why + ": not under user-mode emulation")
	}
}
