package sandbox

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/mcp"
)

// TestSpawnMCP starts a "server" in the agent's sandbox: it runs in the
// workspace with only the entry's environment, until its input ends.
func TestSpawnMCP(t *testing.T) {
	for _, mode := range []string{"bwrap", "trust"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "bwrap" {
				needSandbox(t)
			}
			ws := t.TempDir()
			require.NoError(t, os.Chmod(ws, 0o777)) // the sandbox user (nobody, under root) may enter
			cfg := &config.Config{DataDir: t.TempDir()}
			cfg.Sandbox.Mode = mode
			s := New(Options{Config: cfg.Sandbox, DataDir: cfg.DataDir, Logger: slog.New(slog.DiscardHandler)})
			defer s.Close()
			t.Setenv("AGNX_DAEMON_SECRET", "leak")
			p, err := s.SpawnMCP(context.Background(), ws, mcp.Server{Name: "s", Command: "/bin/sh",
				Args: []string{"-c", `echo "$TOKEN $(pwd)"; env; echo end; cat`}, Env: map[string]string{"TOKEN": "t0k"}})
			require.NoError(t, err)
			out := bufio.NewReader(p.Stdout)
			var lines []string
			for {
				line, err := out.ReadString('\n')
				require.NoError(t, err)
				if line == "end\n" {
					break
				}
				lines = append(lines, line)
			}
			wd := "/workspace"
			if mode == "trust" {
				wd = ws
			}
			assert.Equal(t, "t0k "+wd+"\n", lines[0])
			assert.NotContains(t, strings.Join(lines, ""), "AGNX_DAEMON_SECRET")
			_, err = io.WriteString(p.Stdin, "ping\n")
			require.NoError(t, err)
			line, err := out.ReadString('\n')
			require.NoError(t, err)
			assert.Equal(t, "ping\n", line)
			require.NoError(t, p.Stdin.Close())
			assert.NoError(t, p.Wait())
		})
	}
	_, err := New(Options{DataDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}).
		SpawnMCP(context.Background(), t.TempDir(), mcp.Server{Name: "s"})
	require.ErrorContains(t, err, "has no command")
}
