package main

import (
	"bytes"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// service runs `agnx-lite service ARGS` in-process. Only --dry-run is run
// for real: anything else would install a service on a machine with
// systemd.
func service(t *testing.T, args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	g := &globals{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	err = runService(g, args)
	return out.String(), errb.String(), err
}

func TestService_InstallDryRun_User(t *testing.T) {
	t.Setenv("SUDO_USER", "")
	data := filepath.Join(t.TempDir(), "data")
	out, _, err := service(t, "install", "--user", "--dry-run", "-d", data, "--memory-max", "128M")
	require.NoError(t, err)
	assert.Contains(t, out, "--dry-run: would write ")
	assert.Contains(t, out, "systemd/user/agnx-lite.service")
	assert.Contains(t, out, "ExecStart=")
	assert.Contains(t, out, " serve -d "+data+"\n")
	assert.Contains(t, out, "MemoryMax=128M")
	assert.Contains(t, out, "systemctl --user daemon-reload\nsystemctl --user enable --now agnx-lite\n")
	assert.Contains(t, out, "journalctl --user -u agnx-lite -f")
	assert.NoDirExists(t, data, "a dry run creates nothing")
}

func TestService_InstallDryRun_System(t *testing.T) {
	if _, err := user.Lookup("nobody"); err != nil {
		t.Skip("no account nobody to run the service as")
	}
	t.Setenv("SUDO_USER", "")
	cfg := filepath.Join(t.TempDir(), "agnx.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("server:\n  port: 8099\n"), 0o600))
	out, _, err := service(t, "install", "--dry-run", "--run-as", "nobody", "-c", cfg, "-d", "/srv/agnx")
	if exe, _ := os.Executable(); strings.HasPrefix(exe, "/tmp/") || strings.HasPrefix(cfg, "/tmp/") {
		// go test builds under /tmp, which PrivateTmp= hides from a service.
		assert.ErrorContains(t, err, "PrivateTmp")
		return
	}
	require.NoError(t, err)
	assert.Contains(t, out, "would write /etc/systemd/system/agnx-lite.service")
	assert.Contains(t, out, " serve -c "+cfg+" -d /srv/agnx\n")
	assert.Contains(t, out, "User=nobody\n")
	assert.Contains(t, out, "ReadWritePaths=/srv/agnx\n")
	assert.Contains(t, out, "systemctl daemon-reload\nsystemctl enable --now agnx-lite\n")
	assert.Contains(t, out, "journalctl -u agnx-lite -f")
}

func TestService_Usage(t *testing.T) {
	_, _, err := service(t)
	var ue *usageError
	assert.ErrorAs(t, err, &ue)
	_, _, err = service(t, "restart")
	assert.ErrorAs(t, err, &ue)
	_, _, err = service(t, "status", "--dry-run")
	assert.ErrorAs(t, err, &ue, "--dry-run is for install only")
	_, _, err = service(t, "install", "--user", "--dry-run", "--memory-max", "lots")
	assert.ErrorContains(t, err, "not a size")
}

func TestService_NoSystemd(t *testing.T) {
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		t.Skip("systemd runs here: this test would install a real service")
	}
	t.Setenv("SUDO_USER", "")
	for _, args := range [][]string{
		{"install", "--user", "-d", filepath.Join(t.TempDir(), "d")},
		{"uninstall", "--user"},
		{"status"},
		{"status", "--user"},
	} {
		_, _, err := service(t, args...)
		require.Error(t, err, "%v", args)
		assert.Contains(t, err.Error(), "systemd is not running here", "%v", args)
		assert.NotContains(t, err.Error(), "\n", "one sentence")
	}
}
