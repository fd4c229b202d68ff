package runtime

import (
	"github.com/agnx-lite/agnx-lite/agents"

	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHookMatch(t *testing.T) {
	tests := []struct {
		pattern, inv string
		want         bool
	}{
		{"bash", "bash", true},
		{"bash", "bash:run", false},
		{"background_process:*", "background_process:capture", true},
		{"background_process:*", "bash", false},
		{"*", "anything:at_all", true},
		{"*:recall", "memory:recall", true},
		{"mem*", "xmemory", false},
		{"a?c*", "abc", false},
		{"a?c*", "a?cd", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, hookMatch(tt.pattern, tt.inv), "%q ~ %q", tt.pattern, tt.inv)
	}
}

func TestDefaultHooks(t *testing.T) {
	assert.Empty(t, DefaultHooks(Hooks{}, []string{"bash"}))
	h := DefaultHooks(Hooks{}, []string{"memory", "background_process"})
	assert.Equal(t, []agents.BeforeToolHook{
		{Match: "memory:recall", Type: agents.HookSkipDuplicate, MatchArgs: []string{"days", "query", "limit"}},
		{Match: "background_process:send_keys", Type: agents.HookDependsOn, Prior: "background_process:capture", MatchArg: "handle"},
	}, h.BeforeTool)
	assert.Len(t, h.AfterTool, 2)
	own := Hooks{BeforeTool: []agents.BeforeToolHook{{Match: "memory:recall", Type: agents.HookSkipDuplicate, MatchArgs: []string{"query"}}}}
	h = DefaultHooks(own, []string{"memory"})
	assert.Equal(t, own.BeforeTool, h.BeforeTool, "the agent's hook of the same match replaces the default")
}

func TestUnlessHolds(t *testing.T) {
	u := map[string]any{"wait": true, "n": uint64(2), "s": "x", "z": nil}
	assert.True(t, unlessHolds(u, `{"wait":true}`))
	assert.False(t, unlessHolds(u, `{"wait":false}`))
	assert.True(t, unlessHolds(u, `{"n":2.0}`))
	assert.True(t, unlessHolds(u, `{"s":"x"}`))
	assert.True(t, unlessHolds(u, `{"z":null}`))
	assert.False(t, unlessHolds(u, `{}`))
	assert.False(t, unlessHolds(u, `not json`))
}
