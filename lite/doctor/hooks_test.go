package doctor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
)

// hookSecret is a hook secret long enough to be accepted.
const hookSecret = "0123456789abcdef0123"

// doctor gives a line for each hook: what calls it, where its messages
// go, and a warning for one that an empty secret disables.
func TestDoctor_HookChecks(t *testing.T) {
	t.Setenv("GITHUB_HOOK_SECRET", hookSecret)
	t.Setenv("EMPTY_HOOK_SECRET", "")
	data, err := os.ReadFile(filepath.Join("..", "config", "testdata", "hooks.yaml"))
	require.NoError(t, err)
	c, err := config.Parse("agnx.yaml", data)
	require.NoError(t, err)
	checks := hookChecks(c)
	require.Len(t, checks, 3)
	assert.Equal(t, "ok", checks[0].Status) // ci
	assert.Contains(t, checks[0].Detail, "bearer token")
	assert.Equal(t, "ok", checks[1].Status) // github
	assert.Contains(t, checks[1].Detail, "chat telegram:42")
	assert.Contains(t, checks[1].Detail, "HMAC")
	assert.Equal(t, "warn", checks[2].Status) // off
	assert.Contains(t, checks[2].Detail, "hooks.off.secret is empty")
	assert.NotContains(t, checks[1].Detail, hookSecret)
}
