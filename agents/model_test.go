package agents

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContextWindow(t *testing.T) {
	for name, want := range map[string]int{
		"anthropic/claude-sonnet-4": 200_000, "openai/gpt-5-mini": 400_000, "gpt-4.1-nano": 1_000_000,
		"gpt-4o-mini": 128_000, "google/gemini-2.5-flash": 1_000_000, "x-ai/grok-4-fast": 2_000_000,
		"x-ai/grok-3": 131_072, "deepseek/deepseek-chat-v3.1": 163_840, "deepseek/deepseek-r1": 128_000,
		"Qwen3:1.7b": 131_072, "qwen2.5:3b": 128_000, "meta-llama/llama-4-scout": 327_680,
		"llama3.2:1b": 128_000, "mistralai/mistral-large-2512": 262_144, "mixtral-8x7b": 128_000,
		"gemma3:1b": DefaultMaxInputTokens,
	} {
		assert.Equal(t, want, ContextWindow(name), name)
	}
}

func TestLoad_ModelTokens(t *testing.T) {
	load := func(t *testing.T, model, session string) *Agent {
		t.Helper()
		a, err := Load(writeAgent(t, map[string]string{FileName: header + "spec:\n  model: {provider: ollama, name: gemma3:1b" + model + "}\n" + session}))
		require.NoError(t, err)
		return a
	}
	t.Run("max_tokens is max_output_tokens", func(t *testing.T) {
		assert.Equal(t, 512, load(t, ", max_tokens: 512", "").Model.MaxOutputTokens)
	})
	t.Run("temperature null is unset", func(t *testing.T) {
		assert.Nil(t, load(t, ", temperature: null", "").Model.Temperature)
	})
	t.Run("history capped by max_history_tokens", func(t *testing.T) {
		assert.Equal(t, 40000, load(t, "", "").HistoryBudget())
	})
	t.Run("no cap uses the input window", func(t *testing.T) {
		a := load(t, ", max_input_tokens: 10000, max_output_tokens: 1000", "  session:\n    context: {max_history_tokens: 0}\n")
		assert.Equal(t, 10000, a.Model.InputTokens())
		assert.Equal(t, 10000-1000-1000, a.HistoryBudget())
	})
	t.Run("tiny window keeps a budget", func(t *testing.T) {
		a := load(t, ", max_input_tokens: 100", "  session:\n    context: {max_history_tokens: 0}\n")
		assert.Equal(t, 1, a.HistoryBudget())
	})
}
