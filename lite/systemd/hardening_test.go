package systemd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
)

// probeEnv makes the test binary the sandbox probe of TestHardening.
const probeEnv = "AGNX_SYSTEMD_TEST_PROBE"

func TestMain(m *testing.M) {
	bwrap.Init() // the probe's sandbox re-executes this binary as its init
	if dir := os.Getenv(probeEnv); dir != "" {
		os.Exit(probeMain(dir))
	}
	os.Exit(m.Run())
}

// probeReport is what the probe saw from inside the emulated unit.
type probeReport struct {
	Sandbox        bwrap.Status
	WorkspaceWrite string // output of a command writing in the workspace
	DataDirWrite   string // error writing into the data dir, "" when it worked
	OutsideWrite   string // error writing next to the data dir
	NetworkRun     string // output of a network: true command, or its error
}

// probeMain runs as the service would: bwrap.Probe, a sandboxed command
// writing to an agent workspace, and writes of its own.
func probeMain(dataDir string) int {
	ctx := context.Background()
	r := probeReport{Sandbox: bwrap.Probe(ctx)}
	ws := filepath.Join(dataDir, "workspaces", "assistant")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		r.DataDirWrite = err.Error()
	}
	res, err := (&bwrap.Runner{}).Run(ctx, bwrap.Policy{Workspace: ws, Limits: bwrap.Limits{Timeout: 5 * time.Second}},
		[]string{"sh", "-c", "echo hi > note && cat note"}, nil)
	r.WorkspaceWrite = fmt.Sprintf("%s exit=%d err=%v", strings.TrimSpace(string(res.Output)), res.ExitCode, err)
	res, err = (&bwrap.Runner{}).Run(ctx, bwrap.Policy{Workspace: ws, Network: true, Limits: bwrap.Limits{Timeout: 10 * time.Second}},
		[]string{"sh", "-c", "echo net"}, nil)
	r.NetworkRun = fmt.Sprintf("%s exit=%d err=%v", strings.TrimSpace(string(res.Output)), res.ExitCode, err)
	if err := os.WriteFile(filepath.Join(filepath.Dir(dataDir), "outside"), nil, 0o600); err != nil {
		r.OutsideWrite = err.Error()
	}
	_ = json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// emulation rebuilds a system unit's sandbox with unshare and setpriv, as
// root: a private mount namespace with a fake /home/svc holding the binary
// and the data dir, everything read-only but the data dir (ProtectSystem=
// strict, ProtectHome=read-only, ReadWritePaths=, ProtectControlGroups=),
// fresh /tmp and /var/tmp (PrivateTmp=), a minimal /dev (PrivateDevices=)
// with /dev/net/tun bound in (BindPaths=, DeviceAllow=);
// then nobody, no capabilities at all and no_new_privs (User=,
// CapabilityBoundingSet=, AmbientCapabilities=, NoNewPrivileges=). extra
// runs last, as root, to add a directive under test.
const emulation = `set -e
mount -n --make-rprivate /
mount -n -t tmpfs -o mode=755 tmpfs /home
mkdir -p /home/svc/.agnx-lite /home/svc/bin
cp "$PROBE" /home/svc/bin/agnx-lite
chown -R 65534:65534 /home/svc
D=/home/svc/.agnx-lite
mount -n --bind $D $D
while read -r _ _ _ _ mp _; do
	case "$mp" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*|$D) continue;; esac
	mount -n -o remount,bind,ro "$mp"
done < /proc/self/mountinfo
if [ -d /sys/fs/cgroup ]; then mount -n --bind /sys/fs/cgroup /sys/fs/cgroup; mount -n -o remount,bind,ro /sys/fs/cgroup; fi
mount -n -t tmpfs -o mode=1777 tmpfs /tmp
mount -n -t tmpfs -o mode=1777 tmpfs /var/tmp
mkdir /tmp/dev
mount -n -t tmpfs -o mode=755,nosuid tmpfs /tmp/dev
for n in null zero full random urandom tty; do touch /tmp/dev/$n; mount -n --bind /dev/$n /tmp/dev/$n; done
mkdir /tmp/dev/net; mknod -m 666 /tmp/dev/net/tun c 10 200 # as Debian's udev makes it
mkdir /tmp/dev/pts /tmp/dev/shm
mount -n -t tmpfs -o mode=1777 tmpfs /tmp/dev/shm
mount -n --move /tmp/dev /dev
rmdir /tmp/dev
eval "$EXTRA"
export ` + probeEnv + `=$D
exec setpriv --no-new-privs --reuid=65534 --regid=65534 --clear-groups \
	--bounding-set=-all --inh-caps=-all /home/svc/bin/agnx-lite
`

// runEmulated runs the probe inside the emulation with extra added.
func runEmulated(t *testing.T, extra string) probeReport {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "sh", "-c", emulation)
	cmd.Env = append(os.Environ(), "PROBE="+exe, "EXTRA="+extra)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "the emulation failed: %s", stderr.String())
	var r probeReport
	require.NoError(t, json.Unmarshal(out, &r), "probe output: %s\nstderr: %s", out, stderr.String())
	return r
}

func requireEmulation(t *testing.T) {
	t.Helper()
	testenv.SkipIfNoReexec(t, "the probe re-executes the test binary, and bwrap runs it as the sandbox's init")
	if os.Geteuid() != 0 {
		t.Skip("the hardening emulation needs root (unshare --mount, mount)")
	}
	for _, tool := range []string{"unshare", "setpriv", "mount", "bwrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the hardening emulation cannot run", tool)
		}
	}
	if fi, err := os.Stat("/home"); err != nil || !fi.IsDir() {
		t.Skip("no /home to mount the fake home on")
	}
	if st := bwrap.Probe(context.Background()); !st.Usable {
		t.Skipf("bwrap does not work here even without hardening: %s", st.Problem)
	}
	if err := exec.Command("unshare", "--mount", "true").Run(); err != nil {
		t.Skipf("cannot create a mount namespace here (under emulation or a locked-down container?): %v", err)
	}
}

// TestHardening_BwrapWorks runs the real sandbox under the unit's
// hardening, emulated without systemd.
func TestHardening_BwrapWorks(t *testing.T) {
	requireEmulation(t)
	r := runEmulated(t, "")
	t.Logf("inside the emulated unit: %+v", r)
	assert.True(t, r.Sandbox.Usable, "bwrap must work under the unit's hardening: %s", r.Sandbox.Problem)
	assert.Equal(t, "hi exit=0 err=<nil>", r.WorkspaceWrite, "a tool writes in its workspace under the data dir")
	assert.Empty(t, r.DataDirWrite, "the data dir is writable (ReadWritePaths=)")
	switch {
	case r.Sandbox.Network != "" && testenv.Emulated():
		// Seen under qemu-user only: the helper, started by the emulated
		// daemon, fails setns(CLONE_NEWNET) with EPERM. Natively checked.
		t.Logf("network: true not checked under user-mode emulation: %s", r.NetworkRun)
	case r.Sandbox.Network != "":
		assert.Equal(t, "net exit=0 err=<nil>", r.NetworkRun, "network: true works under the unit (BindPaths=/dev/net/tun)")
	default:
		t.Logf("no network helper (passt or slirp4netns) installed: network: true not checked")
	}
	assert.Contains(t, r.OutsideWrite, "read-only file system", "the rest of home is read-only (ProtectHome=read-only)")
}

// TestHardening_LeftOut shows why the unit leaves these directives out:
// each breaks bwrap's /proc. If one stops breaking it, it may go back in.
func TestHardening_LeftOut(t *testing.T) {
	requireEmulation(t)
	for name, extra := range map[string]string{
		// systemd's read-only bind mounts over /proc subtrees.
		"ProtectKernelTunables": "mount -n --bind /proc/sys /proc/sys; mount -n -o remount,bind,ro /proc/sys",
		// systemd's inaccessible file over /proc/kmsg.
		"ProtectKernelLogs": "mount -n --bind /dev/null /proc/kmsg",
	} {
		t.Run(name, func(t *testing.T) {
			r := runEmulated(t, extra)
			assert.False(t, r.Sandbox.Usable, "%s no longer breaks bwrap: it can be added to the unit", name)
			assert.Contains(t, r.Sandbox.Problem, "proc")
		})
	}
}

// TestHardening_Covered keeps the unit and the emulation in step: every
// sandboxing directive of the system unit is either emulated above or has
// a reason why it cannot touch bwrap.
func TestHardening_Covered(t *testing.T) {
	text, err := goldenUnits()["system.service"].Render()
	require.NoError(t, err)
	emulated := map[string]bool{"NoNewPrivileges": true, "ProtectSystem": true, "ProtectHome": true,
		"ReadWritePaths": true, "PrivateTmp": true, "PrivateDevices": true, "ProtectControlGroups": true,
		"BindPaths": true, "DeviceAllow": true,
		"CapabilityBoundingSet": true, "AmbientCapabilities": true, "User": true, "Group": true}
	harmless := map[string]string{
		"ProtectKernelModules":    "hides /usr/lib/modules behind a mode-000 read-only mount that bwrap's --ro-bind /usr carries along",
		"RestrictSUIDSGID":        "a seccomp filter on setting setuid/setgid bits; bwrap sets none",
		"LockPersonality":         "a seccomp filter on changing personality(2); bwrap does not",
		"RestrictRealtime":        "a seccomp filter on realtime scheduling",
		"SystemCallArchitectures": "a seccomp filter on foreign syscall ABIs; left out for a foreign binary",
	}
	service := map[string]bool{"Description": true, "Documentation": true, "Wants": true, "After": true,
		"StartLimitIntervalSec": true, "StartLimitBurst": true, "Type": true, "NotifyAccess": true,
		"ExecStart": true, "EnvironmentFile": true, "WatchdogSec": true, "Restart": true, "RestartSec": true,
		"RestartPreventExitStatus": true, "KillSignal": true, "TimeoutStopSec": true, "MemoryMax": true, "OOMPolicy": true, "WantedBy": true}
	for k := range directives(text) {
		if !service[k] && !emulated[k] {
			assert.Contains(t, harmless, k, "%s is new: emulate it in TestHardening_BwrapWorks or say why it cannot affect bwrap", k)
		}
	}
}
