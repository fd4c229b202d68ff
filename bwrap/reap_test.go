package bwrap

import (
	"bufio"
	"context"
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

// daemonEnv makes the re-executed test binary play a daemon that starts
// one long sandboxed command and waits to be killed.
const daemonEnv = "AGNX_BWRAP_TEST_DAEMON"

func init() {
	if dir := os.Getenv(daemonEnv); dir != "" {
		os.Exit(fakeDaemon(dir, os.Getenv(daemonEnv+"_MARKER")))
	}
}

// fakeDaemon runs `sleep 1000` (under a unique name) in a sandbox whose
// bwrap, like one caught by a kill in the middle of its set-up, will not
// die with the daemon.
func fakeDaemon(dir, marker string) int {
	ws := filepath.Join(dir, "ws")
	r := &Runner{Owner: &Owner{Dir: filepath.Join(dir, "run")}, orphanable: true}
	_, err := r.Run(context.Background(), Policy{Workspace: ws, Limits: Limits{Timeout: time.Hour}},
		[]string{"/bin/sh", "-c", "cp /bin/sleep ./" + marker + " && touch started && exec ./" + marker + " 1000"}, nil)
	os.Stderr.WriteString("sandbox ended: " + errString(err) + "\n")
	return 1
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func TestReap_EndsWhatADeadDaemonLeft(t *testing.T) {
	skipStartTimeUnderEmulation(t) // Reap tells a live daemon by its identity
	_, ws := sandbox(t)
	dir := filepath.Dir(ws)
	marker := "agnx-left-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	self, err := os.Executable()
	require.NoError(t, err)
	daemon := exec.Command(self, "-test.run=^$")
	daemon.Env = append(os.Environ(), daemonEnv+"="+dir, daemonEnv+"_MARKER="+marker)
	stderr, err := daemon.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, daemon.Start())
	go func() { // what the fake daemon says, for a failing test
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log("daemon: " + sc.Text())
		}
	}()
	t.Cleanup(func() { _ = exec.Command("pkill", "-KILL", "-f", marker).Run() })
	// Once the command runs, the init is past its lifeline check.
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(ws, "started")); return err == nil },
		10*time.Second, 20*time.Millisecond, "the sandboxed command did not start")
	require.Eventually(t, func() bool { return running(marker + " 1000") }, 10*time.Second, 20*time.Millisecond)

	n, err := Reap(filepath.Join(dir, "run"))
	require.NoError(t, err)
	assert.Zero(t, n, "a live daemon's sandboxes are left alone")
	assert.True(t, running(marker))

	require.NoError(t, daemon.Process.Signal(syscall.SIGKILL))
	_ = daemon.Wait()
	assert.True(t, running(marker), "the sandbox outlived its daemon, as a kill mid-set-up leaves it")

	n, err = Reap(filepath.Join(dir, "run"))
	require.NoError(t, err)
	assert.Positive(t, n)
	assertGone(t, marker)
	ents, err := os.ReadDir(filepath.Join(dir, "run"))
	require.NoError(t, err)
	assert.Empty(t, ents, "the dead daemon's record is gone")
}

func TestRun_LifelineCut(t *testing.T) {
	r, ws := sandbox(t)
	r.Owner = &Owner{Dir: t.TempDir()}
	require.NoError(t, r.Owner.start())
	res := run(t, r, Policy{Workspace: ws}, "echo ran > ran.txt")
	require.Zero(t, res.ExitCode, "%s", res.Output)
	require.FileExists(t, filepath.Join(ws, "ran.txt"))
	require.NoError(t, os.Remove(filepath.Join(ws, "ran.txt")))

	// The daemon died while bwrap was setting up: the init, the first
	// thing that runs inside, sees the lifeline cut and runs nothing.
	require.NoError(t, r.Owner.write.Close())
	res = run(t, r, Policy{Workspace: ws}, "echo ran > ran.txt")
	assert.NotZero(t, res.ExitCode)
	assert.Contains(t, string(res.Output), "the daemon that started this sandbox is gone")
	assert.NoFileExists(t, filepath.Join(ws, "ran.txt"))
}

// skipStartTimeUnderEmulation: qemu-user makes up /proc/<self>/stat, and
// the start time it gives differs between the threads of one process, so
// a process's identity (pid and start time) is not stable there. A real
// board's /proc is the kernel's.
func skipStartTimeUnderEmulation(t *testing.T) {
	t.Helper()
	if os.Getenv("AGNX_EMULATED") != "" { // set by ci/test-qemu.sh
		t.Skip("qemu-user fakes /proc/self/stat with a per-thread start time: owner identity is not stable under emulation")
	}
}

func TestOwner_Close(t *testing.T) {
	skipStartTimeUnderEmulation(t)
	o := &Owner{Dir: filepath.Join(t.TempDir(), "run")}
	require.NoError(t, o.Close(), "an owner that ran nothing has nothing to remove")
	require.NoError(t, o.start())
	ents, err := os.ReadDir(o.Dir)
	require.NoError(t, err)
	require.Len(t, ents, 1)
	assert.True(t, ownerAlive(ents[0].Name()))
	require.NoError(t, o.Close())
	ents, err = os.ReadDir(o.Dir)
	require.NoError(t, err)
	assert.Empty(t, ents)
}

func TestOwnerAlive(t *testing.T) {
	skipStartTimeUnderEmulation(t)
	self, err := processID(os.Getpid())
	require.NoError(t, err)
	assert.True(t, ownerAlive(self))
	assert.True(t, ownerAlive(self+"_tag"))
	pid, start, _ := strings.Cut(self, "_")
	assert.False(t, ownerAlive(pid+"_"+start+"1_tag"), "same pid, another start: a reused pid")
	assert.False(t, ownerAlive("999999999_1"))
	assert.True(t, ownerAlive("not-a-record"), "what is not a record is left alone")
}

func TestMarkedOwner(t *testing.T) {
	assert.Equal(t, "12_34_x", markedOwner([]byte("bwrap\x00--unsetenv\x00"+markerPrefix+"12_34_x\x00--unshare-all\x00")))
	assert.Empty(t, markedOwner([]byte("bwrap\x00--unshare-all\x00")))
}

// running tells whether a host process runs the named program.
func running(name string) bool {
	out, _ := exec.Command("pgrep", "-f", name).Output()
	return strings.TrimSpace(string(out)) != ""
}

// Once closed, an owner starts no more sandboxes: their record would be
// gone, and a later start could not reap them.
func TestOwner_NoStartAfterClose(t *testing.T) {
	o := &Owner{Dir: filepath.Join(t.TempDir(), "run")}
	require.NoError(t, o.start())
	require.NoError(t, o.Close())
	assert.ErrorIs(t, o.start(), errOwnerClosed)
	require.NoError(t, o.Close(), "closing twice is harmless")
}
