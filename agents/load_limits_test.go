package agents

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An agent.yaml over 1 MiB is the agent's error, located at its file,
// with a sentence saying what to do: it is never read whole.
func TestLoad_AgentYAMLTooLarge(t *testing.T) {
	dir := writeAgent(t, map[string]string{FileName: header + "spec:\n  model: {provider: ollama, name: m}\n# " +
		strings.Repeat("x", maxFileSize) + "\n"})
	_, err := Load(dir)
	var ae *Error
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, dir+"/agent.yaml: is larger than 1 MiB, the most an agent's file may be: "+
		"shorten it; long texts belong in prompt files, skills or the agent's memory folder", err.Error())
}

// ToolLine locates each spec.tools entry by the line that names it, for
// the errors found when its tool is built.
func TestAgent_ToolLine(t *testing.T) {
	dir := writeAgent(t, map[string]string{FileName: header + "spec:\n  model: {provider: ollama, name: m}\n  tools:\n" +
		"    - type: builtin\n      name: read_file\n    - name: teleport\n      type: builtin\n"})
	a, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, 9, a.ToolLine(0))
	assert.Equal(t, 10, a.ToolLine(1), "the line of its name, wherever in the entry")
	assert.Zero(t, a.ToolLine(2), "no such entry")
	assert.Zero(t, (&Agent{}).ToolLine(0), "an agent not made by Load")
}
