package lite

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
)

// doctor gives a line for each hook: what calls it, where its messages
// go, and a warning for one that an empty secret disables.
func TestDoctor_HookChecks(t *testing.T) {
	t.Setenv("GITHUB_HOOK_SECRET", hookSecret)
	t.Setenv("EMPTY_HOOK_SECRET", "")
	c, err := config.Parse("agnx.yaml", []byte(`hooks:
  github:
    agent: assistant
    target: {gateway: telegram, chat_id: "42"}
    template: "{{.repository.full_name}}: {{.action}}"
    secret: ${GITHUB_HOOK_SECRET}
  ci:
    agent: assistant
    template: "build {{.status | default \"unknown\"}}"
    token: ${GITHUB_HOOK_SECRET}
    max_body_kb: 16
    delivery_header: X-Build-ID
  off:
    agent: assistant
    template: "x"
    secret: ${EMPTY_HOOK_SECRET}
`))
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
