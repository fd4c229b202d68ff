package sandbox

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/workers"
)

// TestWorkerSandbox runs the workers package's ACP test agent through
// a Manager, as a worker tool does: in its folder (at /workspace
// under bwrap), with only its entry's environment, a home of its own,
// and its files written through the client landing in the folder.
func TestWorkerSandbox(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "acpagent")
	out, err := exec.Command("go", "build", "-o", bin, "../workers/testdata/acpagent").CombinedOutput()
	require.NoError(t, err, string(out))
	require.NoError(t, os.Chmod(filepath.Dir(bin), 0o755))
	for _, mode := range []string{"bwrap", "trust"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "bwrap" {
				needSandbox(t)
			}
			dir, home := t.TempDir(), t.TempDir()
			require.NoError(t, os.Chmod(dir, 0o777))
			cfg := &config.Config{DataDir: t.TempDir()}
			cfg.Sandbox.Mode = mode
			s := New(Options{Config: cfg.Sandbox, DataDir: cfg.DataDir, Logger: slog.New(slog.DiscardHandler)})
			defer s.Close()
			t.Setenv("AGNX_DAEMON_SECRET", "leak")
			r := workers.NewACPRunner(workers.RunnerConfig{Name: "w", Argv: []string{bin}, Home: home,
				Env: map[string]string{"TOKEN": "t0k"}, Sandbox: s.ForWorkers(false)})
			inside := "/workspace"
			if mode == "trust" {
				inside = dir
			}
			got, err := r.Run(t.Context(), workers.Job{Dir: dir, Prompt: strings.Join([]string{
				"pwd", "getenv TOKEN", "getenv AGNX_DAEMON_SECRET", "getenv HOME", "write " + inside + "/sub/f.txt data",
			}, "\n")})
			require.NoError(t, err)
			assert.Equal(t, inside+"\nTOKEN=t0k\nAGNX_DAEMON_SECRET=\nHOME="+home+"\nwrote "+inside+"/sub/f.txt", got.Text)
			b, err := os.ReadFile(filepath.Join(dir, "sub", "f.txt"))
			require.NoError(t, err)
			assert.Equal(t, "data", string(b))
			entries, err := os.ReadDir(home)
			require.NoError(t, err)
			assert.NotEmpty(t, entries, "the agent kept its session in its own home")
		})
	}
}

// TestWorkerSandbox_Claude runs the workers package's fake claude
// through a Manager: claude -p works in the job's folder and keeps
// its session in its own home, so the next run resumes it.
func TestWorkerSandbox_Claude(t *testing.T) {
	bin, err := filepath.Abs("../workers/testdata/claude_fake.sh")
	require.NoError(t, err)
	for _, mode := range []string{"bwrap", "trust"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "bwrap" {
				needSandbox(t)
			}
			dir, home := t.TempDir(), t.TempDir()
			require.NoError(t, os.Chmod(dir, 0o777))
			cfg := &config.Config{DataDir: t.TempDir()}
			cfg.Sandbox.Mode = mode
			s := New(Options{Config: cfg.Sandbox, DataDir: cfg.DataDir, Logger: slog.New(slog.DiscardHandler)})
			defer s.Close()
			r := workers.NewClaudeRunner(workers.RunnerConfig{Name: "cc", Binary: bin, Home: home,
				Sandbox: s.ForWorkers(false)})
			out, err := r.Run(t.Context(), workers.Job{Dir: dir, Prompt: "hello"})
			require.NoError(t, err)
			assert.Equal(t, "All done: made.txt written.", out.Text)
			b, err := os.ReadFile(filepath.Join(dir, "made.txt"))
			require.NoError(t, err)
			assert.Equal(t, "made by claude\n", string(b))
			again, err := r.Run(t.Context(), workers.Job{Dir: dir, Prompt: "again", Resume: out.SessionID})
			require.NoError(t, err)
			assert.Equal(t, "resumed "+out.SessionID, again.Text)
		})
	}
}
