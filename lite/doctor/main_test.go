package doctor

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

func TestMain(m *testing.M) {
	bwrap.Init() // the test binary is the sandbox's init, as agnx-lite is
	os.Exit(m.Run())
}

// testConfig is the default config over a data dir of its own, the
// agents in its agents folder.
func testConfig(dir string) *config.Config {
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.AgentsDir = filepath.Join(dir, "agents")
	return cfg
}

func needSandbox(t *testing.T) {
	testenv.SkipIfNoReexec(t, "bwrap runs the re-executed test binary as the sandbox's init")
	if st := bwrap.Probe(context.Background()); !st.Usable {
		t.Skip("bubblewrap unusable here: " + st.Problem)
	}
}

// setSpec rewrites the agent's agent.yaml with an Ollama model and the
// spec lines given.
func setSpec(t *testing.T, dir, lines string) {
	t.Helper()
	yaml := "apiVersion: agnx/v1alpha1\nkind: Agent\nmetadata:\n  name: " + filepath.Base(dir) +
		"\nspec:\n  model:\n    provider: ollama\n    name: m\n" + lines
	require.NoError(t, os.WriteFile(filepath.Join(dir, agents.FileName), []byte(yaml), 0o644))
}
