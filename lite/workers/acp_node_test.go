package workers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// peersEnv names the .peers folder (ci/mcp-peers.sh installs the test
// peers there) when it is not at the module root: a git worktree.
const peersEnv = "AGNX_PEERS_DIR"

// acpSDK returns the entry module of @agentclientprotocol/sdk in .peers,
// or skips (fails under CI=true) when node or the package is missing.
func acpSDK(t *testing.T) string {
	t.Helper()
	missing := func(why string) string {
		if os.Getenv("CI") == "true" {
			t.Fatal(why + " (run ci/mcp-peers.sh)")
		}
		t.Skip(why + ": run ci/mcp-peers.sh, or set " + peersEnv + " to a .peers folder")
		return ""
	}
	if _, err := exec.LookPath("node"); err != nil {
		return missing("node is not installed")
	}
	dir := os.Getenv(peersEnv)
	if dir == "" {
		root, err := filepath.Abs("../..")
		require.NoError(t, err)
		dir = filepath.Join(root, ".peers")
	}
	entry := filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js")
	if _, err := os.Stat(entry); err != nil {
		return missing("@agentclientprotocol/sdk is not installed in " + dir)
	}
	return entry
}

// TestACPRunner_ReferenceSDKAgent runs an agent written with the
// reference TypeScript SDK: chunks, a tool call, one permission asked
// through the policy (allowed, then denied), a file written through the
// client into the job's folder.
func TestACPRunner_ReferenceSDKAgent(t *testing.T) {
	sdk := acpSDK(t)
	node, err := exec.LookPath("node")
	require.NoError(t, err)
	script, err := filepath.Abs("testdata/acp_agent.mjs")
	require.NoError(t, err)
	for _, tc := range []struct {
		decision, text string
		wrote          bool
	}{
		{runtime.AllowOnce, "Tests allowed; wrote from-node.txt.", true},
		{runtime.DenyCall, "Tests rejected; skipped.", false},
	} {
		t.Run(tc.decision, func(t *testing.T) {
			r := NewACPRunner(RunnerConfig{Name: "node", Argv: []string{node, script}, Sandbox: trusted,
				Env: map[string]string{"ACP_SDK": sdk}, ReadOnly: []string{filepath.Dir(script), filepath.Dir(sdk)}})
			rec := &progressRec{}
			var asked []runtime.Question
			r.progress = rec.add
			r.ask = func(_ context.Context, qs []runtime.Question) (string, error) {
				asked = append(asked, qs...)
				return tc.decision, nil
			}
			dir := t.TempDir()
			out, err := r.Run(t.Context(), Job{Dir: dir, Prompt: "run the tests"})
			require.NoError(t, err)
			assert.Equal(t, tc.text, out.Text)
			assert.Equal(t, "end_turn", out.Stop)
			assert.True(t, strings.HasPrefix(out.SessionID, "node-"), out.SessionID)
			assert.Equal(t, []runtime.Question{{Tool: "bash", Subject: "npm test"}}, asked)
			// Progress is coalesced: some of these, in some order, at least one.
			lines := strings.Split(rec.all(), "\n")
			assert.NotEmpty(t, rec.all())
			assert.Subset(t, []string{"read: Reading project files", "execute: Run the tests", "asking: bash npm test",
				"write: " + dir + "/from-node.txt"}, lines)
			_, err = os.Stat(filepath.Join(dir, "from-node.txt"))
			assert.Equal(t, tc.wrote, err == nil)
		})
	}
}
