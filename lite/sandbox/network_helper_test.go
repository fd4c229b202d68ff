package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// networkBash is an agent whose bash has the network, connected by the
// helper sandbox.network_helper names.
func networkBash(t *testing.T, helper string) *runtime.LoadedAgent {
	a := toolAgent(t, "bwrap", "    - {type: builtin, name: bash, network: true}\n", nil)
	for _, tool := range a.Tools {
		if b, ok := tool.(*tools.Bash); ok {
			b.Sandbox.(*agentSandbox).s.cfg.NetworkHelper = helper
			return a
		}
	}
	t.Fatal("the agent has no bash")
	return nil
}

// sandbox.network_helper, not what happens to be installed, decides which
// helper connects a network: true sandbox: slirp4netns's namespace has its
// 10.0.2.100, pasta's the host's own address. auto is slirp4netns where
// installed.
func TestTools_NetworkHelperFromConfig(t *testing.T) {
	needSandbox(t)
	addrs := `{"command":"cat /proc/net/fib_trie; echo checked"}`
	for _, helper := range []string{"auto", "slirp4netns", "pasta"} {
		t.Run(helper, func(t *testing.T) {
			name := helper
			if helper == "auto" {
				name = "slirp4netns"
			}
			if _, err := exec.LookPath(name); err != nil {
				t.Skip(name + " is not installed")
			}
			res := call(t, networkBash(t, helper), "bash", addrs)
			require.False(t, res.IsError, res.Content)
			assert.Contains(t, res.Content, "checked")
			if name == "slirp4netns" {
				assert.Contains(t, res.Content, "10.0.2.100", "slirp4netns's address")
			} else {
				assert.NotContains(t, res.Content, "10.0.2.100", "not slirp4netns's address")
			}
		})
	}
}

// Without the helper it names, network: true refuses with the package to
// install.
func TestTools_NetworkHelperMissing(t *testing.T) {
	needSandbox(t)
	bin, err := exec.LookPath("bwrap")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Symlink(bin, filepath.Join(dir, "bwrap")))
	for helper, pkg := range map[string]string{"auto": "slirp4netns", "pasta": "passt", "slirp4netns": "slirp4netns"} {
		a := networkBash(t, helper)
		t.Setenv("PATH", dir) // bwrap alone
		res := call(t, a, "bash", `{"command":"echo should not run"}`)
		assert.True(t, res.IsError, helper)
		assert.Contains(t, res.Content, `"sudo apt-get install `+pkg+`"`, helper)
		assert.NotContains(t, res.Content, "should not run")
	}
}
