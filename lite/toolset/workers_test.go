package toolset

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
	"github.com/agnx-lite/agnx-lite/lite/workers"
)

func TestRunners_BuildsEachKind(t *testing.T) {
	c, err := config.Parse("agnx.yaml", []byte("workers:\n  w:\n    claude: claude\n  a:\n    acp: [claude-code-acp]\n"))
	require.NoError(t, err)
	require.NoError(t, c.Validate())
	c.DataDir = t.TempDir()
	rs, err := runners(SupervisorOptions{Sandboxes: sandbox.New(sandbox.Options{Config: c.Sandbox, DataDir: c.DataDir}), Config: c})
	require.NoError(t, err)
	assert.IsType(t, &workers.ClaudeRunner{}, rs["w"])
	assert.IsType(t, &workers.ACPRunner{}, rs["a"])
}
