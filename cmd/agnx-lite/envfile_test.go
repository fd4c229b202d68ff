package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unsetenv unsets k for the test and restores it after.
func unsetenv(t *testing.T, k string) {
	t.Setenv(k, "")
	require.NoError(t, os.Unsetenv(k))
}

// doctor reads <data dir>/agnx.env, so a ${VAR} the service would find
// there does not break the CLI; a file others may read is refused.
func TestCLI_EnvFileReadByDoctor(t *testing.T) {
	c := newCLI(t)
	unsetenv(t, "AGNX_TEST_ENVFILE_TG")
	code, _, errs := c.run("init")
	require.Equal(t, 0, code, errs)
	require.NoError(t, os.WriteFile(c.cfg, []byte("server:\n  port: 1\ngateways:\n  telegram:\n"+
		"    enabled: false\n    bot_token: ${AGNX_TEST_ENVFILE_TG}\n"), 0o600))

	_, out, errs := c.run("doctor")
	assert.Contains(t, out+errs, "AGNX_TEST_ENVFILE_TG is not set", "without agnx.env the variable is missing")

	env := filepath.Join(c.dir, "agnx.env")
	require.NoError(t, os.WriteFile(env, []byte("# secrets\nAGNX_TEST_ENVFILE_TG=123:abc\n"), 0o600))
	_, out, errs = c.run("doctor")
	assert.NotContains(t, out+errs, "AGNX_TEST_ENVFILE_TG")
	assert.Contains(t, out, "config")

	require.NoError(t, os.Chmod(env, 0o644))
	unsetenv(t, "AGNX_TEST_ENVFILE_TG")
	code, _, errs = c.run("agent", "list")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "chmod 600")
}

func TestApplyEnvFile_EnvironmentWins(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agnx.env"),
		[]byte("AGNX_TEST_ENVFILE_A=file\nAGNX_TEST_ENVFILE_B=file\n"), 0o600))
	t.Setenv("AGNX_TEST_ENVFILE_A", "env")
	unsetenv(t, "AGNX_TEST_ENVFILE_B")
	require.NoError(t, applyEnvFile(dir))
	assert.Equal(t, "env", os.Getenv("AGNX_TEST_ENVFILE_A"))
	assert.Equal(t, "file", os.Getenv("AGNX_TEST_ENVFILE_B"))
	require.NoError(t, applyEnvFile(t.TempDir()), "no agnx.env is no error")
}
