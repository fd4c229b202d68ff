package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tool run calls no model, so it works without the provider's API key
// that run and chat need.
func TestCLI_ToolRunNeedsNoProviderKey(t *testing.T) {
	c := newCLI(t)
	unsetenv(t, "OPENAI_API_KEY")
	unsetenv(t, "OPENAI_BASE_URL")
	code, _, errs := c.run("init", "--provider", "openai")
	require.Equal(t, 0, code, errs)

	code, out, errs := c.run("tool", "run", "assistant", "list_dir", `{"path": "."}`)
	assert.Equal(t, 0, code, errs)
	assert.NotContains(t, errs, "OPENAI_API_KEY")
	assert.NotEmpty(t, out, "the tool's result")

	code, _, errs = c.run("run", "-m", "hi")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "OPENAI_API_KEY", "a turn still needs the key")
}
