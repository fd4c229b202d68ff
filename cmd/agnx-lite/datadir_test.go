package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A relative data dir is the working directory's: init -d rel writes
// ./rel, and agent list -d rel reads ./rel, not ./rel/rel (the config in
// ./rel once resolved it against its own folder a second time).
func TestCLI_RelativeDataDir(t *testing.T) {
	newCLI(t) // the environment: a fake Ollama, no AGNX_LITE_HOME
	wd := t.TempDir()
	t.Chdir(wd)
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"init", "-d", "rel"}, &out, &errb), errb.String())
	assert.FileExists(t, filepath.Join(wd, "rel", "agnx.yaml"))

	out.Reset()
	require.Equal(t, 0, run([]string{"agent", "list", "-d", "rel"}, &out, &errb), errb.String())
	assert.Contains(t, out.String(), "assistant")
	_, err := os.Stat(filepath.Join(wd, "rel", "rel"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
