package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDB_Compact(t *testing.T) {
	c := newCLI(t)
	code, _, errs := c.run("db", "compact")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "nothing to compact")

	code, _, errs = c.run("run", "-m", "remember the milk")
	require.Equal(t, 0, code, errs)
	code, out, errs := c.run("db", "compact")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^compacted .*agnx\.db: [0-9.]+ [KMG]?i?B → [0-9.]+ [KMG]?i?B\n$`, out)
	code, out, errs = c.run("session", "list")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "remember the milk")

	c.serve()
	code, _, errs = c.run("db", "compact")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "holds the database: stop it first")
	code, _, errs = c.run("db", "shrink")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, "recover or compact")
}
