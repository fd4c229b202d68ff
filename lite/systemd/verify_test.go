package systemd

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// analyze runs `systemd-analyze [--user] verify` on unit and returns the
// lines it wrote about the file: unknown keys, bad values, missing paths.
// systemd-analyze exits 0 even for those, so the text is the verdict.
func analyze(t *testing.T, unit []byte, userUnit bool) []string {
	t.Helper()
	bin, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (apt package systemd): the unit is not verified")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, Name+".service")
	require.NoError(t, os.WriteFile(path, unit, 0o644))
	args := []string{"verify", path}
	if userUnit {
		args = append([]string{"--user"}, args...)
	}
	cmd := exec.Command(bin, args...)
	rt := filepath.Join(dir, "runtime")
	require.NoError(t, os.Mkdir(rt, 0o700))
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+rt, "SYSTEMD_LOG_COLOR=0")
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "Failed to initialize manager") {
		t.Skipf("systemd-analyze cannot run here: %s", strings.TrimSpace(string(out)))
	}
	var findings []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, path) {
			findings = append(findings, line)
		}
	}
	return findings
}

func verifiable(t *testing.T, userUnit bool) *Unit {
	me, err := user.Current()
	require.NoError(t, err)
	g, err := user.LookupGroupId(me.Gid)
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	return &Unit{Exec: exe, DataDir: t.TempDir(), User: me.Username, Group: g.Name, UserUnit: userUnit}
}

func TestUnit_SystemdAnalyzeVerify(t *testing.T) {
	for _, userUnit := range []bool{false, true} {
		name := map[bool]string{false: "system", true: "user"}[userUnit]
		t.Run(name, func(t *testing.T) {
			u := verifiable(t, userUnit)
			u.ConfigFile = u.Exec // any existing file
			text, err := u.Render()
			require.NoError(t, err)
			assert.Empty(t, analyze(t, text, userUnit), "systemd-analyze verify found problems in the unit")
		})
	}
	t.Run("catches mistakes", func(t *testing.T) {
		text, err := verifiable(t, false).Render()
		require.NoError(t, err)
		bad := strings.Replace(string(text), "ProtectSystem=strict", "ProtectSystem=strictly\nBogusKey=1", 1)
		assert.Len(t, analyze(t, []byte(bad), false), 2, "the check must see a bad value and an unknown key")
	})
}
