package systemd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeManager records systemctl calls instead of running them.
func fakeManager(t *testing.T, userUnit bool) (*Manager, *[]string, *bytes.Buffer) {
	var calls []string
	out := &bytes.Buffer{}
	m := &Manager{UserUnit: userUnit, Out: out, UnitDir: t.TempDir(), Booted: func() bool { return true },
		Systemctl: func(_ context.Context, args ...string) (string, error) {
			calls = append(calls, strings.Join(args, " "))
			switch {
			case slices.Contains(args, "is-active"):
				return "active\n", errors.New("exit status 3 is an answer, not a failure")
			case slices.Contains(args, "is-enabled"):
				return "enabled\n", nil
			}
			return "", nil
		}}
	return m, &calls, out
}

func TestManager_InstallUninstall(t *testing.T) {
	m, calls, out := fakeManager(t, true)
	data := filepath.Join(t.TempDir(), "data")
	u := &Unit{Exec: "/usr/bin/agnx-lite", DataDir: data, UserUnit: true, UID: -1, GID: -1}
	require.NoError(t, m.Install(context.Background(), u))

	path, err := m.UnitPath()
	require.NoError(t, err)
	want, _ := u.Render()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	fi, err := os.Stat(u.EnvFile())
	require.NoError(t, err, "install creates agnx.env")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.Equal(t, []string{"--user daemon-reload", "--user enable --now agnx-lite"}, *calls)
	assert.Contains(t, out.String(), "ran systemctl --user enable --now agnx-lite")

	// A second install keeps the secrets already there.
	require.NoError(t, os.WriteFile(u.EnvFile(), []byte("TELEGRAM_BOT_TOKEN=x\n"), 0o600))
	require.NoError(t, m.Install(context.Background(), u))
	env, _ := os.ReadFile(u.EnvFile())
	assert.Equal(t, "TELEGRAM_BOT_TOKEN=x\n", string(env))

	*calls = nil
	require.NoError(t, m.Uninstall(context.Background()))
	assert.Equal(t, []string{"--user disable --now agnx-lite", "--user daemon-reload"}, *calls)
	assert.NoFileExists(t, path)
	assert.FileExists(t, u.EnvFile(), "uninstall leaves the data dir alone")
	assert.Error(t, m.Uninstall(context.Background()), "nothing left to uninstall")
}

func TestManager_Status(t *testing.T) {
	m, calls, _ := fakeManager(t, false)
	st, err := m.Status(context.Background())
	require.NoError(t, err)
	assert.Equal(t, State{Active: "active", Enabled: "enabled"}, st)
	assert.Equal(t, []string{"status --no-pager --lines=10 agnx-lite", "is-active agnx-lite", "is-enabled agnx-lite"}, *calls)
}

func TestManager_NoSystemd(t *testing.T) {
	m, calls, _ := fakeManager(t, false)
	m.Booted = func() bool { return false }
	u := &Unit{Exec: "/usr/bin/agnx-lite", DataDir: t.TempDir(), User: "pi", Group: "pi", UID: -1, GID: -1}
	assert.ErrorIs(t, m.Install(context.Background(), u), ErrNoSystemd)
	assert.ErrorIs(t, m.Uninstall(context.Background()), ErrNoSystemd)
	_, err := m.Status(context.Background())
	assert.ErrorIs(t, err, ErrNoSystemd)
	assert.Empty(t, *calls)
	assert.NotContains(t, ErrNoSystemd.Error(), "\n", "one sentence")
}

func TestManager_SystemctlFails(t *testing.T) {
	m, _, _ := fakeManager(t, true)
	m.Systemctl = func(context.Context, ...string) (string, error) {
		return "Failed to connect to bus: No medium found\n", errors.New("exit status 1")
	}
	u := &Unit{Exec: "/usr/bin/agnx-lite", DataDir: t.TempDir(), UserUnit: true, UID: -1, GID: -1}
	err := m.Install(context.Background(), u)
	require.Error(t, err)
	assert.Equal(t, "systemctl --user daemon-reload failed: Failed to connect to bus: No medium found", err.Error())
}

func TestResolve(t *testing.T) {
	me, err := user.Current()
	require.NoError(t, err)
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	exe := "/usr/local/bin/agnx-lite"

	u, err := Resolve(Request{UserUnit: true, Exec: exe, Getenv: getenv})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(me.HomeDir, ".agnx-lite"), u.DataDir)
	assert.Equal(t, exe, u.Exec)

	env["AGNX_LITE_HOME"] = "/srv/agnx"
	u, err = Resolve(Request{UserUnit: true, Exec: exe, Getenv: getenv})
	require.NoError(t, err)
	assert.Equal(t, "/srv/agnx", u.DataDir)

	_, err = Resolve(Request{UserUnit: true, Exec: exe, Getenv: getenv, Euid: func() int { return 0 },
		DataDir: "/srv/x"})
	assert.NoError(t, err, "root without sudo may install a --user unit for root")

	env["SUDO_USER"] = me.Username
	_, err = Resolve(Request{UserUnit: true, Exec: exe, Getenv: getenv, Euid: func() int { return 0 }})
	if me.Username != "root" {
		assert.ErrorContains(t, err, "without sudo")
	}

	_, err = Resolve(Request{RunAs: "root", Exec: exe, Getenv: getenv})
	assert.ErrorContains(t, err, "refusing to run the service as root")

	_, err = Resolve(Request{RunAs: "no-such-user-agnx", Exec: exe, Getenv: getenv})
	assert.ErrorContains(t, err, "there is no account")

	_, err = Resolve(Request{UserUnit: true, Exec: exe, Getenv: getenv, ConfigFile: "/nonexistent/agnx.yaml"})
	assert.ErrorContains(t, err, "config file")

	if nobody, err := user.Lookup("nobody"); err == nil {
		_, err := Resolve(Request{RunAs: "nobody", Exec: "/tmp/agnx-lite", DataDir: "/srv/agnx", Getenv: getenv})
		assert.ErrorContains(t, err, "PrivateTmp", "a binary under /tmp is invisible to the service")
		u, err := Resolve(Request{RunAs: "nobody", Exec: exe, DataDir: "/srv/agnx", Getenv: getenv})
		require.NoError(t, err)
		assert.Equal(t, "nobody", u.User)
		assert.Equal(t, nobody.Uid, strconv.Itoa(u.UID))
	}
}

func TestNextSteps(t *testing.T) {
	sys := NextSteps(goldenUnits()["system.service"])
	assert.Contains(t, sys, "journalctl -u agnx-lite -f")
	assert.Contains(t, sys, "systemctl status agnx-lite")
	assert.Contains(t, sys, "agnx-lite chat -d /home/pi/.agnx-lite")
	assert.Contains(t, sys, "/home/pi/.agnx-lite/agnx.env")
	usr := NextSteps(goldenUnits()["user.service"])
	assert.Contains(t, usr, "journalctl --user -u agnx-lite -f")
	assert.Contains(t, usr, "loginctl enable-linger")
}
