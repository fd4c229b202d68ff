package bwrap

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
)

func TestMain(m *testing.M) {
	Init() // this test binary is also the sandbox's init
	os.Exit(m.Run())
}

// sandbox skips the test where bwrap cannot run, saying why.
func sandbox(t *testing.T) (*Runner, string) {
	t.Helper()
	testenv.SkipIfNoReexec(t, "bwrap runs the re-executed test binary as the sandbox's init")
	if st := Probe(context.Background()); !st.Usable {
		t.Skip("bubblewrap unusable here: " + st.Problem)
	}
	ws := filepath.Join(t.TempDir(), "ws")
	require.NoError(t, os.MkdirAll(ws, 0o777))
	require.NoError(t, os.Chmod(ws, 0o777)) // the sandbox user may write
	return &Runner{}, ws
}

func run(t *testing.T, r *Runner, p Policy, script string) Result {
	t.Helper()
	res, err := r.Run(context.Background(), p, []string{"/bin/sh", "-c", script}, nil)
	require.NoError(t, err)
	return res
}

func TestRun_Basics(t *testing.T) {
	r, ws := sandbox(t)
	p := Policy{Workspace: ws}
	res := run(t, r, p, `echo hello; pwd; id -u; echo "$HOME"; echo out > made.txt; exit 3`)
	assert.Equal(t, 3, res.ExitCode)
	assert.Equal(t, "hello\n/workspace\n1000\n/workspace\n", string(res.Output))
	data, err := os.ReadFile(filepath.Join(ws, "made.txt"))
	require.NoError(t, err, "the workspace is writable and shared")
	assert.Equal(t, "out\n", string(data))

	res, err = r.Run(context.Background(), p, []string{"cat"}, []byte("from stdin"))
	require.NoError(t, err)
	assert.Equal(t, "from stdin", string(res.Output))

	res = run(t, r, p, "env | sort")
	assert.NotContains(t, string(res.Output), "AGNX", "the environment is cleared")
	assert.Contains(t, string(res.Output), "PATH=")
}

func TestRun_Limits(t *testing.T) {
	r, ws := sandbox(t)
	res := run(t, r, Policy{Workspace: ws, Limits: Limits{MemoryMB: 300, MaxProcs: 50, FileMB: 7}}, "cat /proc/self/limits")
	out := string(res.Output)
	if !testenv.Emulated() { // qemu-user keeps RLIMIT_AS to itself: the guest's address space is its own
		assert.Regexp(t, `Max address space\s+314572800\s+314572800`, out)
	}
	assert.Regexp(t, `Max processes\s+50\s+50`, out)
	assert.Regexp(t, `Max file size\s+7340032\s+7340032`, out)

	res = run(t, r, Policy{Workspace: ws, Limits: Limits{FileMB: 1}}, "head -c 3000000 /dev/zero > big; echo rc=$?")
	assert.Contains(t, string(res.Output), "rc=1", "a file past FileMB cannot be written")

	res = run(t, r, Policy{Workspace: ws, Limits: Limits{FileMB: -1}}, "echo x > f; echo rc=$?; touch e && rm big && echo left")
	assert.Contains(t, string(res.Output), "rc=1\nleft\n",
		"with FileMB < 0 no file grows, the shell lives on, deleting works")
}

// The escape suite: none of these may reach outside the sandbox.
func TestRun_Escapes(t *testing.T) {
	r, ws := sandbox(t)
	home := t.TempDir()
	secret := filepath.Join(home, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("TOP-SECRET"), 0o644))
	policies := map[string]Policy{"userns": {Workspace: ws}}
	if os.Geteuid() == 0 { // a root daemon's default: the command runs as nobody
		policies["run_as"] = Policy{Workspace: ws, RunAs: &User{UID: 65534, GID: 65534}}
	}
	cases := map[string]string{
		"planted secret":  "cat " + secret,
		"etc shadow":      "cat /etc/shadow",
		"root home":       "ls /root",
		"proc of host":    "cat /proc/1/environ; ls /proc | grep -c '^[0-9]'",
		"escape via link": "ln -s " + secret + " l; cat l",
		"dotdot":          "cat ../" + filepath.Base(home) + "/secret.txt",
	}
	for mode, p := range policies {
		for name, script := range cases {
			t.Run(mode+"/"+name, func(t *testing.T) {
				res := run(t, r, p, script)
				assert.NotContains(t, string(res.Output), "TOP-SECRET")
				assert.NotContains(t, string(res.Output), "root:", "no /etc/shadow")
			})
		}
		t.Run(mode+"/write outside", func(t *testing.T) {
			res := run(t, r, p, "echo x > /usr/pwned; echo x > /etc/pwned; echo x > /tmp/pwned-"+filepath.Base(ws)+"; echo done")
			assert.Contains(t, string(res.Output), "done")
			assert.NoFileExists(t, "/usr/pwned")
			assert.NoFileExists(t, "/etc/pwned")
			assert.NoFileExists(t, "/tmp/pwned-"+filepath.Base(ws), "/tmp is private")
		})
	}
}

func TestRun_NoNetwork(t *testing.T) {
	r, ws := sandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("REACHED\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := "exec 3<>/dev/tcp/127.0.0.1/" + itoa(port) + " && cat <&3; " +
		"(echo > /dev/tcp/127.0.0.1/" + itoa(port) + ") 2>&1; cat /sys/class/net/*/operstate 2>/dev/null; ls /sys/class/net"
	bash := []string{"/bin/bash", "-c", script}
	res, err := r.Run(context.Background(), Policy{Workspace: ws}, bash, nil)
	require.NoError(t, err)
	assert.NotContains(t, string(res.Output), "REACHED", "the host's loopback is not reachable")

	if _, err := lookNet(""); err != nil {
		return // network: true is TestRun_NetworkHasNoHostLoopback's, which says why it skips
	}
	res, err = r.Run(context.Background(), Policy{Workspace: ws, Network: true}, bash, nil)
	require.NoError(t, err)
	assert.NotContains(t, string(res.Output), "REACHED", "nor with the network granted")
}

func TestRun_TimeoutKillsTheTree(t *testing.T) {
	r, ws := sandbox(t)
	marker := "agnx-sleep-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	start := time.Now()
	res := run(t, r, Policy{Workspace: ws, Limits: Limits{Timeout: 300 * time.Millisecond}},
		"cp /bin/sleep ./"+marker+"; ./"+marker+" 100 & ./"+marker+" 100")
	assert.True(t, res.TimedOut, "exit %d: %s", res.ExitCode, res.Output)
	assert.Less(t, time.Since(start), 60*time.Second, "the tree was killed, not waited for (100 s)")
	assertGone(t, marker)
}

func TestRun_NothingOutlivesTheCommand(t *testing.T) {
	r, ws := sandbox(t)
	marker := "agnx-bg-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	res := run(t, r, Policy{Workspace: ws}, "cp /bin/sleep ./"+marker+"; (setsid ./"+marker+" 100 &) ; echo started")
	assert.False(t, res.TimedOut)
	assert.Contains(t, string(res.Output), "started")
	assertGone(t, marker)
}

func TestRun_ForkBomb(t *testing.T) {
	r, ws := sandbox(t)
	p := Policy{Workspace: ws, Limits: Limits{Timeout: 3 * time.Second, MaxProcs: 32}}
	if os.Geteuid() == 0 {
		// RLIMIT_NPROC does not bind root: the command runs as another
		// user, as lite's sandbox.run_as has it for a root daemon; one of
		// its own, so that the bomb starves no other test's sandbox.
		uid := testenv.LoneUID()
		p.RunAs = &User{UID: uid, GID: uid}
	}
	marker := "agnx-bomb-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	start := time.Now()
	res := run(t, r, p, "cp /bin/sh ./"+marker+"; ./"+marker+" -c 'b() { b | b & }; b'; sleep 1; echo survived")
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Contains(t, string(res.Output), "fork", "the process limit stopped the bomb")
	assertGone(t, marker)
}

func TestRun_OutputFlood(t *testing.T) {
	r, ws := sandbox(t)
	start := time.Now()
	res := run(t, r, Policy{Workspace: ws, Limits: Limits{MaxOutput: 1000}}, "head -c 100000000 /dev/zero | tr '\\0' x; echo")
	assert.Len(t, res.Output, 1000)
	assert.EqualValues(t, 100000001-1000, res.Cut)
	assert.Less(t, time.Since(start), 10*time.Second, "the flood is drained, not stalled")
}

// assertGone checks no host process runs the named program.
func assertGone(t *testing.T, name string) {
	t.Helper()
	require.Eventually(t, func() bool {
		out, _ := exec.Command("pgrep", "-f", name).Output()
		return strings.TrimSpace(string(out)) == ""
	}, 5*time.Second, 20*time.Millisecond, "a sandboxed process outlived its command")
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestRun_TmpIsCapped(t *testing.T) {
	r, ws := sandbox(t)
	res := run(t, r, Policy{Workspace: ws, Limits: Limits{TmpMB: 1}},
		"head -c 3000000 /dev/zero > /tmp/big; echo rc=$?; df -k /tmp | tail -1")
	out := string(res.Output)
	assert.Contains(t, out, "No space left on device")
	assert.Contains(t, out, "rc=1", "/tmp past TmpMB cannot be written")
	assert.Regexp(t, `\s1024\s`, out, "a 1 MiB /tmp")
	assert.Contains(t, Args(Policy{}, "", []string{"true"}), "67108864", "64 MiB by default")
}

func TestRun_RunAs(t *testing.T) {
	r, ws := sandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("RunAs takes a daemon running as root")
	}
	p := Policy{Workspace: ws, RunAs: &User{UID: 65534, GID: 65534}}
	require.NoError(t, os.Chown(ws, 65534, 65534))
	require.NoError(t, os.Chmod(ws, 0o700), "the workspace is the sandbox user's alone")
	res := run(t, r, p, `id -un; id -u; id -g; id -G; grep -E '^(CapEff|CapPrm|CapAmb|NoNewPrivs)' /proc/self/status; `+
		`echo x > made.txt; cat /proc/1/environ >/dev/null 2>&1 || echo "pid 1 unreadable"`)
	out := string(res.Output)
	assert.Regexp(t, `^nobody\n65534\n65534\n65534\n`, out, "/etc (passwd, certificates, alternatives) is readable")
	assert.Regexp(t, `CapPrm:\s+0+\n`, out, "no capability left")
	assert.Regexp(t, `CapEff:\s+0+\n`, out)
	assert.Regexp(t, `CapAmb:\s+0+\n`, out)
	assert.Regexp(t, `NoNewPrivs:\s+1`, out)
	assert.Contains(t, out, "pid 1 unreadable", "bwrap's pid 1 stays root's")
	st, err := os.Stat(filepath.Join(ws, "made.txt"))
	require.NoError(t, err)
	assert.EqualValues(t, 65534, st.Sys().(*syscall.Stat_t).Uid, "files are the sandbox user's")

	// A CLI tool's folder, deep in root's private folders, is bound
	// read-only at its own path: the sandbox user can reach and run it.
	tool := filepath.Join(t.TempDir(), "private", "tools", "x")
	require.NoError(t, os.MkdirAll(tool, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(tool, "run"), []byte("#!/bin/sh\necho tool ran\n"), 0o755))
	require.NoError(t, os.Chmod(tool, 0o755))
	p.ReadOnly = []string{tool}
	res = run(t, r, p, filepath.Join(tool, "run")+"; touch /tmp/t && echo tmp writable")
	assert.Equal(t, "tool ran\ntmp writable\n", string(res.Output))
}
