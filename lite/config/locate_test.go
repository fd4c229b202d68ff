package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLocate(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDataDir, "")
	cfg, err := Locate("", dir)
	require.NoError(t, err)
	assert.Equal(t, dir, cfg.DataDir)
	assert.Equal(t, filepath.Join(dir, "agents"), cfg.AgentsDir)
	assert.Empty(t, cfg.File, "no agnx.yaml yet: the embedded defaults")

	wrote, err := Init(cfg)
	require.NoError(t, err)
	assert.Len(t, wrote, 2)
	wrote, err = Init(cfg)
	require.NoError(t, err)
	assert.Empty(t, wrote, "init leaves what exists alone")

	cfg, err = Locate("", dir)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "agnx.yaml"), cfg.File)

	t.Setenv(EnvDataDir, dir)
	cfg, err = Locate("", "")
	require.NoError(t, err)
	assert.Equal(t, dir, cfg.DataDir)

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("runtime:\n  max_concurrent_turns: many\n"), 0o644))
	_, err = Locate(bad, "")
	assert.ErrorContains(t, err, bad+":2:")
}
