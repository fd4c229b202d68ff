package agents

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const memModel = "spec:\n  model:\n    provider: ollama\n    name: m\n" // lines 5-8

func TestLoad_Memory(t *testing.T) {
	for yaml, want := range map[string]Memory{
		"":                                  {},
		"  memory:\n":                       {}, // null is absent
		"  memory: {}\n":                    {Backend: "filesystem"},
		"  memory: {backend: filesystem}\n": {Backend: "filesystem"},
		"  memory: {backend: postgres}\n":   {Backend: "postgres"},
		"  memory:\n    embeddings: {provider: ollama, model: nomic-embed-text}\n": {Backend: "filesystem",
			Embeddings: Embeddings{Provider: "ollama", Model: "nomic-embed-text"}},
		"  memory:\n    backend: filesystem\n    embeddings:\n      provider: openai\n      model: text-embedding-3-small\n      base_url: https://api.example/v1\n": {
			Backend: "filesystem", Embeddings: Embeddings{Provider: "openai", Model: "text-embedding-3-small", BaseURL: "https://api.example/v1"}},
	} {
		a, err := Load(writeAgent(t, map[string]string{FileName: header + memModel + yaml}))
		require.NoError(t, err, yaml)
		assert.Equal(t, want, a.Memory, yaml)
	}
}

func TestLoad_MemoryErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		"  memory:\n    embeddings: {provider: cohere, model: x}\n":                                     `agent.yaml:10: spec.memory.embeddings.provider "cohere" is not one of ollama, openai, openrouter`,
		"  memory:\n    embeddings: {provider: ollama}\n":                                               "agent.yaml:10: spec.memory.embeddings.model is required: name the embedding model (e.g. nomic-embed-text)",
		"  memory:\n    embeddings: {model: x}\n":                                                       "agent.yaml:10: spec.memory.embeddings needs a provider (ollama, openai, openrouter)",
		"  memory:\n    embeddings:\n      provider: ollama\n      model: m\n      base_url: ftp://x\n": `agent.yaml:13: spec.memory.embeddings.base_url "ftp://x" is not an http:// or https:// URL`,
		"  memory: {backend: [x]}\n":                                                                    "spec.memory.backend must be a string",
	} {
		_, err := Load(writeAgent(t, map[string]string{FileName: header + memModel + yaml}))
		var e *Error
		require.True(t, errors.As(err, &e), "%s: %v", yaml, err)
		assert.True(t, strings.HasSuffix(err.Error(), want), "%s:\n got %s\nwant %s", yaml, err, want)
	}
}

// An unknown key under spec.memory is a warning, as everywhere.
func TestLoad_MemoryUnknownKey(t *testing.T) {
	a, err := Load(writeAgent(t, map[string]string{FileName: header + memModel + "  memory: {backend: filesystem, embedings: {}}\n"}))
	require.NoError(t, err)
	assert.Contains(t, strings.Join(a.Warnings, "\n"), `unknown field "embedings" in spec.memory`)
}

func TestAgent_HasMemory(t *testing.T) {
	assert.False(t, (&Agent{}).HasMemory())
	assert.True(t, (&Agent{Memory: Memory{Backend: "filesystem"}}).HasMemory())
	assert.False(t, (&Agent{Memory: Memory{Backend: "postgres"}}).HasMemory())
	assert.True(t, (&Agent{Tools: []ToolRef{{Type: "builtin", Name: "Memory"}}}).HasMemory())
	assert.True(t, (&Agent{Tools: []ToolRef{{Type: "builtin", Name: "recall"}}}).HasMemory())
	assert.False(t, (&Agent{Tools: []ToolRef{{Type: "cli", Name: "memory"}}}).HasMemory())
}

func TestAgent_RenderSystem_MemoryDirective(t *testing.T) {
	now := time.Date(2026, 3, 9, 14, 5, 0, 0, time.UTC)
	mem := Memory{Backend: "filesystem"}
	tests := []struct {
		name string
		a    Agent
		want string // after the prime directives; "" for nothing
	}{
		{"no memory, no directive", Agent{}, ""},
		{"memory: the default, alone", Agent{Memory: mem}, "## Directives\n- " + MemoryDirective + "\n"},
		{"after the others", Agent{Memory: mem, SharedDirectives: []Directive{{Name: "a", Text: "A."}},
			Directives: []Directive{{Name: "b", Text: "B."}}},
			"## Directives\n- A.\n- B.\n- " + MemoryDirective + "\n"},
		{"the agent's memory.md replaces it", Agent{Memory: mem, Directives: []Directive{{Name: "memory", Text: "Mine."}}},
			"## Directives\n- Mine.\n"},
		{"the data dir's memory.md replaces it", Agent{Memory: mem, SharedDirectives: []Directive{{Name: "memory", Text: "Ours."}}},
			"## Directives\n- Ours.\n"},
		{"a backend lite lacks: no tool, no directive", Agent{Memory: Memory{Backend: "postgres"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rest, ok := strings.CutPrefix(tt.a.RenderSystem(now), PrimeDirectives)
			require.True(t, ok)
			if tt.want == "" {
				assert.Empty(t, rest)
				return
			}
			assert.Equal(t, "\n\n"+tt.want, rest)
		})
	}
	for _, word := range []string{"`memory`", "`recall`", "`remember`", "`reflect`", "`update_world`", "`query`"} {
		assert.Contains(t, MemoryDirective, word)
	}
}

// A memory.md in the agent's directives folder, loaded from disk,
// replaces the default directive.
func TestLoad_MemoryDirectiveFile(t *testing.T) {
	dir := writeAgent(t, map[string]string{FileName: header + memModel + "  memory: {}\n", "directives/memory.md": "Use memory sparingly."})
	a, err := Load(dir)
	require.NoError(t, err)
	sys := a.RenderSystem(time.Now())
	assert.Contains(t, sys, "- Use memory sparingly.")
	assert.NotContains(t, sys, MemoryDirective)
}
