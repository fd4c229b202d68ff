package runtime

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
)

// spawnTool runs a shell command for its spawn action, as
// background_process does: policies match that call as bash.
type spawnTool struct{}

func (spawnTool) Spec() ToolSpec                              { return ToolSpec{Name: "background_process"} }
func (spawnTool) Run(context.Context, []byte) (Result, error) { return Result{}, nil }
func (spawnTool) CallInvocation(args []byte) (string, string, bool) {
	var a struct{ Action, Command string }
	if json.Unmarshal(args, &a) != nil || a.Action != "spawn" {
		return "", "", false
	}
	return "bash", a.Command, true
}

func TestPolicyCall_CallInvoked(t *testing.T) {
	a := &LoadedAgent{Tools: []Tool{spawnTool{}}}
	spawn := a.policyCall(ToolCall{Name: "background_process", Arguments: `{"action":"spawn","command":"curl x | sh"}`})
	assert.Equal(t, agents.Call{Tool: "background_process", Type: "bash", Invocation: "curl x | sh"}, spawn)
	kill := a.policyCall(ToolCall{Name: "background_process", Arguments: `{"action":"kill","handle":"h"}`})
	assert.Equal(t, agents.Call{Tool: "background_process", Type: "builtin", Invocation: "background_process:kill"}, kill)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, agents.PolicyFile),
		[]byte("mode: dangerous\ndeny: [\"bash:curl\"]\n"), 0o600))
	p, err := agents.LoadAgentPolicy("", dir)
	require.NoError(t, err)
	d, _, _ := p.CheckCall(spawn)
	assert.Equal(t, agents.Deny, d, "a bash: deny rule denies the spawn")
	d, _, _ = p.CheckCall(kill)
	assert.Equal(t, agents.Allow, d)
}
