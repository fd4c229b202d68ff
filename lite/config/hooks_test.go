package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
)

const hookSecret = "0123456789abcdef0123"

func TestParse_Hooks(t *testing.T) {
	t.Setenv("GITHUB_HOOK_SECRET", hookSecret)
	t.Setenv("EMPTY_HOOK_SECRET", "")
	data, err := os.ReadFile(filepath.Join("testdata", "hooks.yaml"))
	require.NoError(t, err)
	c, err := Parse("agnx.yaml", data)
	require.NoError(t, err)
	gh := c.Hooks["github"]
	assert.Equal(t, HookTarget{Gateway: "telegram", ChatID: "42"}, gh.Target)
	assert.Equal(t, DefaultHookBodyKB, gh.MaxBodyKB)
	assert.Equal(t, defaultHookPerMin, gh.MaxPerMinute)
	assert.True(t, gh.Signed)
	assert.NotNil(t, gh.Parsed)
	assert.False(t, gh.Disabled())
	ci := c.Hooks["ci"]
	assert.False(t, ci.Signed)
	assert.Equal(t, 16, ci.MaxBodyKB)
	assert.Equal(t, "X-Build-ID", ci.DeliveryHeader)
	assert.True(t, c.Hooks["off"].Disabled(), "an empty secret disables the hook, it is no error")
}

func TestParse_HookErrors(t *testing.T) {
	t.Setenv("S", hookSecret)
	for _, c := range []struct{ name, hook, want string }{
		{"no auth", "agent: a\n    template: x", "hooks.h needs a secret"},
		{"both", "agent: a\n    template: x\n    secret: ${S}\n    token: ${S}", "has both secret and token"},
		{"short", "agent: a\n    template: x\n    token: short", "hooks.h.token is too short"},
		{"no agent", "template: x\n    token: ${S}", "hooks.h.agent is required"},
		{"no template", "agent: a\n    token: ${S}", "hooks.h.template is required"},
		{"half chat", "agent: a\n    template: x\n    token: ${S}\n    target: {gateway: telegram}", "needs both gateway and chat_id"},
		{"chat and session", "agent: a\n    template: x\n    token: ${S}\n    target: {gateway: t, chat_id: \"1\", session: s}", "names a session and a chat"},
		{"body", "agent: a\n    template: x\n    token: ${S}\n    max_body_kb: 2048", "max_body_kb 2048 is out of range"},
		{"header", "agent: a\n    template: x\n    token: ${S}\n    delivery_header: \"X Y\"", "is not a header name"},
		{"syntax", "agent: a\n    token: ${S}\n    template: \"{{.a\"", "hooks.h.template: the action at byte 0 is not closed: end it with }}"},
		{"unknown func", "agent: a\n    token: ${S}\n    template: \"{{.a | exec}}\"", `hooks.h.template: the function "exec" at byte 7 is unknown: use default, json or trunc`},
		{"bad argument", "agent: a\n    token: ${S}\n    template: \"{{.a | trunc x}}\"", "hooks.h.template: trunc at byte 7 needs a number"},
		{"empty", "agent: a\n    token: ${S}\n    template: \"x {{ }}\"", "hooks.h.template: the action at byte 2 is empty"},
		{"range", "agent: a\n    token: ${S}\n    template: '{{range .a}}{{.}}{{end}}'", "only .path and | default/json/trunc are supported"},
		{"define", "agent: a\n    token: ${S}\n    template: '{{define \"x\"}}{{template \"x\"}}{{end}}{{template \"x\"}}'", "only .path and | default/json/trunc are supported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("agnx.yaml", []byte("hooks:\n  h:\n    "+c.hook+"\n"))
			require.Error(t, err)
			var ae *agents.Error
			require.ErrorAs(t, err, &ae)
			assert.Contains(t, err.Error(), c.want)
			assert.Greater(t, ae.Line, 1, "the error points into the hook")
			assert.NotContains(t, err.Error(), hookSecret)
		})
	}
	_, err := Parse("agnx.yaml", []byte("hooks:\n  Bad.Name:\n    agent: a\n    template: x\n    token: "+hookSecret+"\n"))
	assert.ErrorContains(t, err, "may contain only a-z")
}
