package bwrap

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
)

// secretValue is what a provider key in the daemon's environment and in
// its data dir looks like in these tests.
const secretValue = "sk-agnx-test-DAEMON-SECRET-4242"

// The escape battery for secrets: whatever a command inside reads (the
// environ of every pid, its own, env, pid 1's argv, the data dir), it
// never finds the daemon's secret, with the network granted or not.
func TestRun_DaemonSecretsStayOut(t *testing.T) {
	sandbox(t)
	t.Setenv("AGNX_TEST_OPENAI_API_KEY", secretValue)
	data := t.TempDir() // the daemon's data dir: agnx.env and the workspaces
	require.NoError(t, os.WriteFile(filepath.Join(data, "agnx.env"), []byte("OPENAI_API_KEY="+secretValue+"\n"), 0o600))
	ws := filepath.Join(data, "workspaces", "a")
	require.NoError(t, os.MkdirAll(ws, 0o777))
	require.NoError(t, os.Chmod(ws, 0o777))

	script := `for f in /proc/[0-9]*/environ /proc/self/environ; do echo "== $f"; tr '\0' '\n' < "$f"; done
echo "== env"; env
echo "== cmdline"; for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < "$f"; echo; done
echo "== fds"; ls /proc/$$/fd
echo "== pids"; ls /proc | grep '^[0-9]' | tr '\n' ' '; echo
echo "== data"; cat ` + filepath.Join(data, "agnx.env") + ` ../../agnx.env; ls ` + data + `
echo "== end"`
	cases := []struct {
		name    string
		network bool
		owner   bool  // as the daemon runs it: the lifeline is fd 3 of bwrap
		runAs   *User // a root daemon's sandbox user
	}{
		{name: "no network"}, {name: "network", network: true},
		{name: "owner, network", network: true, owner: true},
		{name: "run as nobody, network", network: true, owner: true, runAs: &User{UID: 65534, GID: 65534}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.network {
				skipWithoutNet(t)
			}
			r := &Runner{}
			if c.owner {
				r.Owner = &Owner{Dir: t.TempDir()}
				t.Cleanup(func() { _ = r.Owner.Close() })
			}
			if c.runAs != nil {
				if os.Geteuid() != 0 {
					t.Skip("RunAs takes a daemon running as root")
				}
			}
			res := run(t, r, Policy{Workspace: ws, Network: c.network, RunAs: c.runAs}, script)
			out := string(res.Output)
			require.Contains(t, out, "== end", "the battery ran to its end")
			require.Contains(t, out, "== /proc/1/environ", "pid 1 (bwrap) is there to be read")
			assert.NotContains(t, out, secretValue)
			assert.NotContains(t, out, "AGNX_TEST_OPENAI_API_KEY")
			fds := between(out, "== fds\n", "== pids")
			assert.Equal(t, "0\n1\n2\n", fds, "the command inherits stdin, stdout and stderr only")
			for _, pid := range strings.Fields(between(out, "== pids\n", "== data")) {
				assert.Less(t, len(pid), 3, "/proc shows the sandbox's pids only: %s", out)
			}
		})
	}
}

// between returns what out holds between from and to.
func between(out, from, to string) string {
	_, rest, _ := strings.Cut(out, from)
	s, _, _ := strings.Cut(rest, to)
	return s
}

// Trust mode has no namespaces, but the command's environment is still
// the policy's alone (PATH, HOME, LANG and Env), never the daemon's: its
// init hands on only what it was started with.
func TestRun_TrustModeGetsOnlyThePolicyEnv(t *testing.T) {
	testenv.SkipIfNoReexec(t, "trust mode runs the re-executed test binary as the command's init")
	t.Setenv("AGNX_TEST_OPENAI_API_KEY", secretValue)
	ws := t.TempDir()
	r := &Runner{Trust: true}
	res, err := r.Run(context.Background(), Policy{Workspace: ws, Env: map[string]string{"TOOL_MODE": "fast"}},
		[]string{"/usr/bin/env"}, nil)
	require.NoError(t, err)
	// As a set: qemu-user hands a program its environment in another order.
	assert.ElementsMatch(t, []string{"HOME=" + ws, "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin", "TOOL_MODE=fast"},
		strings.Fields(string(res.Output)))
	assert.NotContains(t, string(res.Output), secretValue)
}
