package bgproc

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// A subagent's call working in another folder (its parent's) gives its
// workdir in that folder; the log stays in the agent's own workspace.
func TestTool_SpawnWorkdirInOverride(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode, Options{})
			other := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(other, "only-there"), 0o755))
			r := &bwrap.Runner{Trust: mode == "trust"}
			// As lite's Start does: the process runs in the call's folder.
			h.tool = h.m.Tool(Sandbox{Agent: "ada", Workspace: h.ws, Start: func(ctx context.Context, dir string, cmd []string) (*bwrap.Process, error) {
				ws, ro := tools.WorkspaceFor(ctx, h.ws)
				return r.Start(ctx, bwrap.Policy{Workspace: ws, WorkspaceReadOnly: ro, Chdir: dir}, cmd)
			}})
			ctx := runtime.WithCall(context.Background(), runtime.CallInfo{SessionID: "s1", Agent: "ada", Workspace: other})
			res, err := h.tool.Run(ctx, []byte(`{"action":"spawn","wait":true,"workdir":"only-there","command":"pwd; echo hi > made"}`))
			require.NoError(t, err)
			require.False(t, res.IsError, res.Content)
			var w waitResult
			require.NoError(t, json.Unmarshal([]byte(res.Content), &w), res.Content)
			assert.Contains(t, w.Output, "only-there\n")
			assert.FileExists(t, filepath.Join(other, "only-there", "made"))
			logs, _ := filepath.Glob(filepath.Join(h.ws, ".agnx", "processes", "*.log"))
			assert.Len(t, logs, 1, "the log is in the agent's own workspace")

			res = h.run(t, `{"action":"spawn","workdir":"only-there","command":"pwd"}`)
			assert.Contains(t, res.Content, `workdir "only-there" is not a folder of the workspace`, "without the override: the agent's own")
		})
	}
}
