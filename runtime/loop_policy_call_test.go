package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agnx-lite/agnx-lite/agents"
)

// kindTool is a tool of a given kind whose subject is its arguments.
type kindTool struct{ name, kind string }

func (k kindTool) Spec() ToolSpec                              { return ToolSpec{Name: k.name} }
func (k kindTool) Run(context.Context, []byte) (Result, error) { return Result{}, nil }
func (k kindTool) Kind() string                                { return k.kind }
func (k kindTool) Subject(args []byte) string {
	if k.name == "bash" {
		return strings.TrimSuffix(strings.TrimPrefix(string(args), `{"command":"`), `"}`)
	}
	return string(args)
}

func TestPolicyCall(t *testing.T) {
	a := &LoadedAgent{Tools: []Tool{kindTool{"bash", "builtin"}, kindTool{"memory", "builtin"},
		kindTool{"report", "cli"}, kindTool{"hello", "wasm"}}}
	tests := []struct {
		c    ToolCall
		want agents.Call
	}{
		{ToolCall{Name: "bash", Arguments: `{"command":"ls -la"}`},
			agents.Call{Tool: "bash", Type: "bash", Subject: "ls -la", Invocation: "ls -la"}},
		{ToolCall{Name: "memory", Arguments: `{"action":"recall"}`},
			agents.Call{Tool: "memory", Type: "builtin", Subject: `{"action":"recall"}`, Invocation: "memory:recall"}},
		{ToolCall{Name: "memory", Arguments: `{"action":7}`},
			agents.Call{Tool: "memory", Type: "builtin", Subject: `{"action":7}`, Invocation: "memory"}},
		{ToolCall{Name: "report", Arguments: `{"q":1}`},
			agents.Call{Tool: "report", Type: "cli", Subject: `{"q":1}`, Invocation: "report"}},
		{ToolCall{Name: "hello", Arguments: `{}`},
			agents.Call{Tool: "hello", Type: "wasm", Subject: `{}`, Invocation: "hello"}},
		{ToolCall{Name: "nope"}, agents.Call{Tool: "nope"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, a.policyCall(tt.c), tt.c.Name)
	}
	long := agents.Call{Tool: "bash", Invocation: strings.Repeat("x", 2*maxDeniedEcho)}
	assert.Less(t, len(deniedResult(long, "").Content), maxDeniedEcho+100, "a denied command is not echoed whole")
	assert.Equal(t, "Command 'ls' was denied by policy. This command is not allowed.",
		deniedResult(agents.Call{Tool: "bash", Invocation: "ls"}, "").Content)
}
