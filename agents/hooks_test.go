package agents

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const hooksModel = "spec:\n  model: {provider: ollama, name: m}\n  hooks:\n"

func TestLoad_Hooks(t *testing.T) {
	dir := writeAgent(t, map[string]string{FileName: header + hooksModel + `    before_tool:
      - match: "background_process:send_keys"
        type: depends_on
        prior: "background_process:capture"
        match_arg: handle
      - match: "memory:recall"
        type: skip_duplicate
        match_args: [days]
      - match: "web:*"
        type: depends_on
    after_tool:
      - match: "background_process:spawn"
        message: Capture the screen before sending keys.
        unless: {wait: true, n: 2}
`})
	a, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, []BeforeToolHook{
		{Match: "background_process:send_keys", Type: HookDependsOn, Prior: "background_process:capture", MatchArg: "handle"},
		{Match: "memory:recall", Type: HookSkipDuplicate, MatchArgs: []string{"days"}},
	}, a.Hooks.BeforeTool, "the depends_on without prior is dropped")
	require.Len(t, a.Hooks.AfterTool, 1)
	assert.Equal(t, "Capture the screen before sending keys.", a.Hooks.AfterTool[0].Message)
	assert.Equal(t, true, a.Hooks.AfterTool[0].Unless["wait"])
	assert.EqualValues(t, 2, a.Hooks.AfterTool[0].Unless["n"])
	require.Len(t, a.Warnings, 1)
	assert.Contains(t, a.Warnings[0], "spec.hooks.before_tool[2] is depends_on without prior")
}

func TestLoad_HooksErrors(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"no match":   {"    before_tool: [{type: skip_duplicate}]\n", "spec.hooks.before_tool[0].match is required"},
		"no type":    {"    before_tool: [{match: bash}]\n", "spec.hooks.before_tool[0].type is required"},
		"bad type":   {"    before_tool: [{match: bash, type: never}]\n", `"never" is not one of depends_on, skip_duplicate`},
		"no message": {"    after_tool: [{match: bash}]\n", "spec.hooks.after_tool[0].message is required"},
		"not a list": {"    after_tool: {match: bash}\n", "spec.hooks.after_tool must be a list"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(writeAgent(t, map[string]string{FileName: header + hooksModel + tc.yaml}))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
