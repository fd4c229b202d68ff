package systemd

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.service from the current output")

// goldenUnits are the units testdata holds, by file name.
func goldenUnits() map[string]*Unit {
	return map[string]*Unit{
		"system.service": {Exec: "/usr/local/bin/agnx-lite", DataDir: "/home/pi/.agnx-lite",
			User: "pi", Group: "pi", UID: -1, GID: -1},
		"system-config.service": {Exec: "/usr/local/bin/agnx-lite", ConfigFile: "/etc/agnx-lite/agnx.yaml",
			DataDir: "/srv/agnx%data", User: "agnx", Group: "agnx", MemoryMax: "256M", ForeignArch: true, UID: -1, GID: -1},
		"user.service": {Exec: "/home/pi/bin/agnx-lite", DataDir: "/home/pi/.agnx-lite", UserUnit: true, UID: -1, GID: -1},
	}
}

func TestUnit_Render_Golden(t *testing.T) {
	for name, u := range goldenUnits() {
		t.Run(name, func(t *testing.T) {
			got, err := u.Render()
			require.NoError(t, err)
			path := filepath.Join("testdata", name)
			if *update {
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -run Golden -update to create it")
			assert.Equal(t, string(want), string(got), "run go test -run Golden -update if the change is meant")
		})
	}
}

func TestUnit_Render_Directives(t *testing.T) {
	sys, err := goldenUnits()["system.service"].Render()
	require.NoError(t, err)
	d := directives(sys)
	for k, v := range map[string]string{
		"Type": "notify", "NotifyAccess": "main", "WatchdogSec": "30s", "Restart": "on-failure",
		"RestartSec": "5s", "StartLimitIntervalSec": "5min", "StartLimitBurst": "5",
		"RestartPreventExitStatus": "78", "MemoryMax": "128M", "OOMPolicy": "continue", "TimeoutStopSec": "30s", "KillSignal": "SIGTERM",
		"ExecStart":       "/usr/local/bin/agnx-lite serve -d /home/pi/.agnx-lite",
		"EnvironmentFile": "-/home/pi/.agnx-lite/agnx.env", "ReadWritePaths": "/home/pi/.agnx-lite",
		"User": "pi", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "read-only",
		"PrivateTmp": "yes", "PrivateDevices": "yes", "CapabilityBoundingSet": "", "AmbientCapabilities": "",
		"SystemCallArchitectures": "native",
	} {
		assert.Contains(t, d, k)
		assert.Equal(t, v, d[k], k)
	}
	for _, k := range []string{"RestrictNamespaces", "PrivateUsers", "ProtectProc", "ProcSubset",
		"ProtectKernelTunables", "ProtectKernelLogs", "MemoryDenyWriteExecute", "Environment"} {
		assert.NotContains(t, d, k, "%s breaks bwrap or leaks secrets", k)
	}

	usr, err := goldenUnits()["user.service"].Render()
	require.NoError(t, err)
	d = directives(usr)
	for _, k := range []string{"User", "ProtectSystem", "ProtectHome", "ReadWritePaths", "PrivateTmp",
		"PrivateDevices", "CapabilityBoundingSet", "After"} {
		assert.NotContains(t, d, k, "a user manager cannot apply %s", k)
	}
	assert.Equal(t, "default.target", d["WantedBy"])
	assert.Equal(t, "yes", d["NoNewPrivileges"])
}

func TestUnit_Render_Escapes(t *testing.T) {
	u := &Unit{Exec: "/opt/a$b/agnx-lite", DataDir: "/srv/50%", User: "pi", Group: "pi"}
	out, err := u.Render()
	require.NoError(t, err)
	d := directives(out)
	assert.Equal(t, "/opt/a$$b/agnx-lite serve -d /srv/50%%", d["ExecStart"])
	assert.Equal(t, "/srv/50%%", d["ReadWritePaths"])
}

func TestUnit_Render_Refuses(t *testing.T) {
	base := Unit{Exec: "/usr/bin/agnx-lite", DataDir: "/home/pi/.agnx-lite", User: "pi", Group: "pi"}
	for name, mod := range map[string]func(*Unit){
		"relative data dir": func(u *Unit) { u.DataDir = "data" },
		"space in path":     func(u *Unit) { u.DataDir = "/home/pi/my data" },
		"newline in exec":   func(u *Unit) { u.Exec = "/usr/bin/x\nUser=root" },
		"bad user":          func(u *Unit) { u.User = "pi\nUser=root" },
		"bad memory":        func(u *Unit) { u.MemoryMax = "64MB" },
	} {
		t.Run(name, func(t *testing.T) {
			u := base
			mod(&u)
			_, err := u.Render()
			assert.Error(t, err)
		})
	}
	u := base
	u.MemoryMax = "infinity"
	_, err := u.Render()
	assert.NoError(t, err)
}

// directives maps each Key= of a unit to its value (the last one wins).
func directives(unit []byte) map[string]string {
	d := map[string]string{}
	for _, line := range splitLines(string(unit)) {
		if line == "" || line[0] == '#' || line[0] == '[' {
			continue
		}
		for i := 0; i < len(line); i++ {
			if line[i] == '=' {
				d[line[:i]] = line[i+1:]
				break
			}
		}
	}
	return d
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
