package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
)

// init --provider --model --base-url writes the default agent's
// spec.model, for scripts; bad values are refused before anything is
// written.
func TestCLI_InitFlags(t *testing.T) {
	c := newCLI(t)
	for _, bad := range [][]string{
		{"--provider", "olama"},
		{"--model", "x"},
		{"--provider", "openai", "--model", "a b"},
		{"--provider", "openai", "--model", `a"b`},
		{"--provider", "ollama", "--base-url", "ftp://x"},
		{"--provider", "ollama", "--base-url", "http://"},
	} {
		code, _, errs := c.run(append([]string{"init"}, bad...)...)
		assert.Equal(t, 2, code, "%v: %s", bad, errs)
		assert.NotContains(t, errs, "\n\n")
	}
	assert.NoFileExists(t, filepath.Join(c.dir, "agnx.yaml"), "nothing written")

	code, out, errs := c.run("init", "--provider", "openai", "--model", "gpt-4.1-mini", "--base-url", "http://10.0.0.2:8000/v1")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "wrote ")
	a, err := agents.Load(filepath.Join(c.dir, "agents", "assistant"))
	require.NoError(t, err)
	assert.Equal(t, agents.Model{Provider: "openai", Name: "gpt-4.1-mini", BaseURL: "http://10.0.0.2:8000/v1"},
		agents.Model{Provider: a.Model.Provider, Name: a.Model.Name, BaseURL: a.Model.BaseURL})

	code, _, errs = c.run("init", "--provider", "ollama")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "exists already: edit its spec.model")

	c2 := newCLI(t)
	code, _, errs = c2.run("init", "--provider", "anthropic")
	require.Equal(t, 0, code, errs)
	a, err = agents.Load(filepath.Join(c2.dir, "agents", "assistant"))
	require.NoError(t, err)
	assert.Equal(t, "anthropic", a.Model.Provider)
	assert.Equal(t, defaultModels["anthropic"], a.Model.Name, "the provider's default model")
	assert.Empty(t, a.Model.BaseURL)
}

func TestPromptModel(t *testing.T) {
	var out strings.Builder
	m, err := promptModel(strings.NewReader("openrouter\n\nhttps://example.org/api/v1\n"), &out)
	require.NoError(t, err)
	assert.Equal(t, initModel{Provider: "openrouter", Name: "openai/gpt-4o-mini", BaseURL: "https://example.org/api/v1"}, m)
	assert.Contains(t, out.String(), "Provider (ollama, openai, anthropic or openrouter) [ollama]: ")

	m, err = promptModel(strings.NewReader("\n\n\n"), &out)
	require.NoError(t, err)
	assert.Equal(t, initModel{Provider: "ollama", Name: "qwen3:1.7b"}, m, "enter keeps the defaults")

	out.Reset()
	m, err = promptModel(strings.NewReader("nope\nollama\nllama3.2:1b\n\n"), &out)
	require.NoError(t, err, out.String())
	assert.Equal(t, initModel{Provider: "ollama", Name: "llama3.2:1b"}, m, "asks again after a bad answer")
	assert.Contains(t, out.String(), `"nope": use ollama`)

	_, err = promptModel(strings.NewReader("nope\n"), &out)
	assert.ErrorContains(t, err, "give --provider and --model", "end of input after a bad answer")
}
