package lite

import (
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

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
)

// Open ends what a killed instance of this data dir left running.
func TestOpen_ReapsLeftoverSandboxes(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	dead := "999999999_1" // no such process
	require.NoError(t, os.MkdirAll(sandbox.RunDir(cfg.DataDir), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(sandbox.RunDir(cfg.DataDir), dead), nil, 0o600))
	left := exec.Command("bash", "-c", `exec -a AGNX_SANDBOX_OWNER_`+dead+` sleep 1000`)
	require.NoError(t, left.Start())
	exited := make(chan error, 1)
	go func() { exited <- left.Wait() }()
	require.Eventually(t, func() bool { // bash has become the marked process
		argv, _ := os.ReadFile("/proc/" + strconv.Itoa(left.Process.Pid) + "/cmdline")
		return strings.HasPrefix(string(argv), "AGNX_SANDBOX_OWNER_")
	}, 10*time.Second, 5*time.Millisecond)

	app, err := Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal())
	case <-time.After(10 * time.Second):
		_ = left.Process.Kill()
		t.Fatal("the leftover sandbox still runs")
	}
	assert.NoFileExists(t, filepath.Join(sandbox.RunDir(cfg.DataDir), dead))
}
