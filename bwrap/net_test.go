package bwrap

import (
	"bufio"
	"context"
	"encoding/hex"
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
)

// skipWithoutNet skips a test of network: true where pasta is missing.
func skipWithoutNet(t testing.TB) {
	t.Helper()
	if _, err := lookNet(""); err != nil {
		t.Skip("pasta is not installed (sudo apt-get install passt): " + err.Error())
	}
}

// listen serves "REACHED" on addr until the test ends.
func listen(t *testing.T, addr string) *net.TCPAddr {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
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
	return ln.Addr().(*net.TCPAddr)
}

// dial is a bash line that prints what addr:port answers, or why not.
func dial(addr string, port int) string {
	return "echo " + addr + ": $(timeout 2 bash -c 'exec 3<>/dev/tcp/" + addr + "/" + itoa(port) + " && cat <&3' 2>&1); "
}

// eachHelper runs f with each network helper installed here as the only
// one on PATH (bwrap is then given by its absolute path).
func eachHelper(t *testing.T, r *Runner, f func(t *testing.T)) {
	skipWithoutNet(t)
	bin, err := exec.LookPath("bwrap")
	require.NoError(t, err)
	r.Bwrap = bin
	for _, name := range []string{"pasta", "slirp4netns"} {
		t.Run(name, func(t *testing.T) {
			path, err := exec.LookPath(name)
			if err != nil {
				t.Skip(name + " is not installed")
			}
			dir := t.TempDir()
			require.NoError(t, os.Symlink(path, filepath.Join(dir, name)))
			t.Setenv("PATH", dir)
			f(t)
		})
	}
}

// With the network granted, the host's loopback is still out of reach:
// the daemon's API and every local service (a listener on 127.0.0.1, one
// on all addresses through the loopback and the gateway's address).
func TestRun_NetworkHasNoHostLoopback(t *testing.T) {
	r, ws := sandbox(t)
	lo := listen(t, "127.0.0.1:0")
	all := listen(t, "0.0.0.0:0")
	script := dial("127.0.0.1", lo.Port) + dial("127.0.0.1", all.Port) + dial("localhost", lo.Port)
	// pasta's gateway is the host's, slirp4netns's 10.0.2.2: either maps
	// to the host's loopback unless told not to.
	for _, gw := range []string{hostGateway(t), "10.0.2.2"} {
		if gw != "" {
			script += dial(gw, all.Port)
		}
	}
	script += "ip -4 route 2>/dev/null || cat /proc/net/route"
	eachHelper(t, r, func(t *testing.T) {
		res, err := r.Run(context.Background(), Policy{Workspace: ws, Network: true}, []string{"/bin/bash", "-c", script}, nil)
		require.NoError(t, err)
		out := string(res.Output)
		assert.NotContains(t, out, "REACHED", "nothing on the host's loopback answers")
		assert.Contains(t, out, "127.0.0.1: ", "the checks ran")
		assert.Regexp(t, `default via|00000000\s+[0-9A-F]{8}\s+0003`, out, "the sandbox has a default route out")
	})
}

// Outbound works: an address that is not the host's loopback answers. The
// host's main address is the namespace's own inside, and there is no
// internet here, so the test gives the host one more address (root only).
func TestRun_NetworkReachesOutside(t *testing.T) {
	r, ws := sandbox(t)
	skipWithoutNet(t)
	addr := extraAddress(t)
	srv := listen(t, addr+":0")
	script := dial(addr, srv.Port)
	eachHelper(t, r, func(t *testing.T) {
		res, err := r.Run(context.Background(), Policy{Workspace: ws, Network: true}, []string{"/bin/bash", "-c", script}, nil)
		require.NoError(t, err)
		assert.Contains(t, string(res.Output), "REACHED", "outbound connections get through")

		// A root daemon's sandbox user (no user namespace) too.
		p := Policy{Workspace: ws, Network: true, RunAs: &User{UID: 65534, GID: 65534}}
		res, err = r.Run(context.Background(), p, []string{"/bin/bash", "-c", script + "id -u"}, nil)
		require.NoError(t, err)
		assert.Contains(t, string(res.Output), "REACHED")
		assert.Contains(t, string(res.Output), "65534")
	})
	res, err := r.Run(context.Background(), Policy{Workspace: ws}, []string{"/bin/bash", "-c", script}, nil)
	require.NoError(t, err)
	assert.NotContains(t, string(res.Output), "REACHED", "without the network, nothing does")
}

// Without a network helper, network: true refuses, saying what to
// install: slirp4netns for auto, the package of the helper configured.
func TestRun_NetworkWithoutHelper(t *testing.T) {
	r, ws := sandbox(t)
	t.Setenv("PATH", t.TempDir()) // bwrap is found by its absolute path below
	bin, err := exec.LookPath("/usr/bin/bwrap")
	if err != nil {
		t.Skip("bwrap is not at /usr/bin/bwrap")
	}
	r.Bwrap = bin
	for helper, apt := range map[string]string{"": "slirp4netns", Pasta: "passt", Slirp4netns: "slirp4netns"} {
		r.NetworkHelper = helper
		_, err = r.Run(context.Background(), Policy{Workspace: ws, Network: true}, []string{"true"}, nil)
		require.ErrorIs(t, err, ErrUnavailable)
		assert.Contains(t, err.Error(), `"sudo apt-get install `+apt+`"`, helper)
	}
}

// netDaemonEnv makes the re-executed test binary play a daemon running
// one long network-enabled sandboxed command.
const netDaemonEnv = "AGNX_BWRAP_TEST_NET_DAEMON"

func init() {
	if ws := os.Getenv(netDaemonEnv); ws != "" {
		marker := os.Getenv(netDaemonEnv + "_MARKER")
		r := &Runner{NetworkHelper: os.Getenv(netDaemonEnv + "_HELPER")}
		_, err := r.Run(context.Background(), Policy{Workspace: ws, Network: true, Limits: Limits{Timeout: time.Hour}},
			[]string{"/bin/sh", "-c", "cp /bin/sleep ./" + marker + " && touch started && exec ./" + marker + " 1000"}, nil)
		os.Stderr.WriteString("sandbox ended: " + errString(err) + "\n")
		os.Exit(1)
	}
}

// A daemon killed outright takes its sandbox and that sandbox's network
// helper with it.
func TestRun_NetworkDiesWithTheDaemon(t *testing.T) {
	_, ws := sandbox(t)
	skipWithoutNet(t)
	self, err := os.Executable()
	require.NoError(t, err)
	for _, helper := range []string{Slirp4netns, Pasta} {
		t.Run(helper, func(t *testing.T) {
			if _, err := exec.LookPath(helper); err != nil {
				t.Skip(helper + " is not installed")
			}
			ws := filepath.Join(ws, helper)
			require.NoError(t, os.Mkdir(ws, 0o777))
			require.NoError(t, os.Chmod(ws, 0o777))
			marker := "agnx-netd-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			daemon := exec.Command(self, "-test.run=^$")
			daemon.Env = append(os.Environ(), netDaemonEnv+"="+ws, netDaemonEnv+"_MARKER="+marker, netDaemonEnv+"_HELPER="+helper)
			require.NoError(t, daemon.Start())
			t.Cleanup(func() { _ = exec.Command("pkill", "-KILL", "-f", marker).Run() })
			require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(ws, "started")); return err == nil },
				10*time.Second, 20*time.Millisecond, "the sandboxed command did not start")
			out, _ := exec.Command("pgrep", "-P", strconv.Itoa(daemon.Process.Pid), "-f", "no-map-gw|disable-host-loopback").Output()
			helpers := strings.Fields(string(out))
			require.Len(t, helpers, 1, "the daemon runs one network helper")

			require.NoError(t, daemon.Process.Signal(syscall.SIGKILL))
			_ = daemon.Wait()
			assertGone(t, marker)
			require.Eventually(t, func() bool {
				_, err := os.Stat("/proc/" + helpers[0])
				return err != nil
			}, 5*time.Second, 20*time.Millisecond, helper+" outlived the daemon")
		})
	}
}

// hostGateway is the host's IPv4 default gateway, "" when none.
func hostGateway(t *testing.T) string {
	f, err := os.Open("/proc/net/route")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) > 2 && fl[1] == "00000000" && fl[2] != "00000000" {
			b, err := hex.DecodeString(fl[2])
			if err == nil && len(b) == 4 {
				return net.IPv4(b[3], b[2], b[1], b[0]).String()
			}
		}
	}
	return ""
}

// extraAddress gives the host one more address (TEST-NET-2, on its
// loopback device but outside 127/8: an address like a second network
// card's), removed at the test's end.
func extraAddress(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("adding a host address to prove outbound traffic needs root")
	}
	addr := "198.51.100." + itoa(1+os.Getpid()%250)
	if out, err := exec.Command("ip", "addr", "add", addr+"/32", "dev", "lo").CombinedOutput(); err != nil {
		t.Skipf("cannot add a host address: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "addr", "del", addr+"/32", "dev", "lo").Run() })
	return addr
}

// Probe finds the helper the Runner would use: slirp4netns for auto
// where installed, the one configured otherwise; and says what to
// install where there is none.
func TestProbe_Network(t *testing.T) {
	st := Probe(context.Background())
	if _, err := exec.LookPath(Slirp4netns); err == nil {
		assert.Contains(t, st.Network, Slirp4netns, "auto prefers the lighter helper")
	}
	if _, err := exec.LookPath(Pasta); err == nil {
		st = (&Runner{NetworkHelper: Pasta}).Probe(context.Background())
		assert.Contains(t, st.Network, Pasta)
	}
	t.Setenv("PATH", t.TempDir())
	st = Probe(context.Background())
	assert.Empty(t, st.Network)
	assert.Contains(t, st.NetworkProblem, `"sudo apt-get install slirp4netns"`)
	st = (&Runner{NetworkHelper: Pasta}).Probe(context.Background())
	assert.Contains(t, st.NetworkProblem, `"sudo apt-get install passt"`)
}

// fakePasta stands in for pasta and checks what the real one relies on:
// when it is started, bwrap's own set-up of the namespace is over (its
// loopback has 127.0.0.1 and is up). pasta brings that loopback up first
// thing, which makes the kernel add the address, so a pasta started any
// earlier made bwrap's own exclusive add of it fail ("loopback: Failed
// RTM_NEWADDR"). It says it is ready as pasta does, through its pid
// file, only when the check holds.
const fakePasta = `#!/bin/sh
pid= user=
while [ $# -gt 0 ]; do
  case $1 in
  --pid) pid=$2; shift ;;
  --userns) user=--user=$2 ;;
  esac
  shift
done
addr=$(nsenter --net=/proc/self/fd/3 $user ip -o -4 addr show dev lo)
link=$(nsenter --net=/proc/self/fd/3 $user ip -o link show dev lo)
case "$addr" in *127.0.0.1/8*) ;; *) echo "started before bwrap added lo's address: $addr" >&2; exit 1 ;; esac
case "$link" in *,UP*) ;; *) echo "started before bwrap brought lo up: $link" >&2; exit 1 ;; esac
echo $$ > "$pid"
exec sleep 1000
`

// The helper is started only once bwrap has set up the namespace's
// loopback: every time, not as a matter of timing.
func TestRun_NetworkHelperStartsAfterBwrapSetUp(t *testing.T) {
	r, ws := sandbox(t)
	for tool, pkg := range map[string]string{"nsenter": "util-linux", "ip": "iproute2"} {
		if _, err := exec.LookPath(tool); err != nil {
			why := tool + ` is not installed: install it with "sudo apt-get install ` + pkg + `"`
			if os.Getenv("CI") == "true" {
				t.Fatal(why) // ci/deps.sh installs it: a CI run must not pass by skipping
			}
			t.Skip(why)
		}
	}
	dir := t.TempDir()
	helper := filepath.Join(dir, "pasta")
	require.NoError(t, os.WriteFile(helper, []byte(fakePasta), 0o755))
	r.NetworkHelper = helper
	for range 20 {
		res, err := r.Run(context.Background(), Policy{Workspace: ws, Network: true},
			[]string{"/bin/sh", "-c", "echo ran"}, nil)
		require.NoError(t, err)
		require.Equal(t, "ran\n", string(res.Output))
	}
}

// netLoopEnv sets how many times TestRun_NetworkEveryTime starts a
// network sandbox with each helper (default 10), e.g.
// AGNX_NET_LOOP=1000 go test -run TestRun_NetworkEveryTime ./bwrap.
const netLoopEnv = "AGNX_NET_LOOP"

// A network sandbox starts every time, with either helper: no race in
// its set-up fails one now and then.
func TestRun_NetworkEveryTime(t *testing.T) {
	r, ws := sandbox(t)
	n := 10
	if v := os.Getenv(netLoopEnv); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err, netLoopEnv)
	}
	eachHelper(t, r, func(t *testing.T) {
		for i := range n {
			res, err := r.Run(context.Background(), Policy{Workspace: ws, Network: true},
				[]string{"/bin/sh", "-c", "cat /proc/net/dev"}, nil)
			require.NoError(t, err, "start %d of %d", i+1, n)
			require.Equal(t, 0, res.ExitCode, "start %d of %d: %s", i+1, n, res.Output)
			require.Regexp(t, `tap0|eth0|ens|enp`, string(res.Output), "start %d of %d", i+1, n)
		}
	})
}
