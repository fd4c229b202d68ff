package agents

import "strings"

// DefaultMaxInputTokens is the context window assumed for a model whose
// name the table in ContextWindow does not know.
const DefaultMaxInputTokens = 128000

// DefaultOutputBudget is the room kept for the answer when spec.model has
// no max_output_tokens (which is then not sent to the provider).
const DefaultOutputBudget = 4096

// contextWindows maps a substring of a model name (lower case) to the
// model's context window, most specific first: the same table as Agnx's,
// so an agent without max_input_tokens gets the same history budget.
var contextWindows = []struct {
	substr string
	tokens int
}{
	{"claude", 200_000},
	{"gpt-5", 400_000},
	{"gpt-4.1", 1_000_000},
	{"gpt-4", 128_000}, // gpt-4o, gpt-4-turbo
	{"gemini", 1_000_000},
	{"grok-4", 2_000_000},
	{"grok", 131_072},
	{"deepseek-v3", 163_840},
	{"deepseek-chat-v3", 163_840},
	{"deepseek", 128_000},
	{"qwen3", 131_072},
	{"qwen", 128_000},
	{"llama-4", 327_680},
	{"llama", 128_000},
	{"mistral-large", 262_144},
	{"mistral", 128_000},
	{"mixtral", 128_000},
}

// ContextWindow is the context window of the model called name, by the
// first entry of a table of model families whose name is part of it, or
// DefaultMaxInputTokens.
func ContextWindow(name string) int {
	name = strings.ToLower(name)
	for _, w := range contextWindows {
		if strings.Contains(name, w.substr) {
			return w.tokens
		}
	}
	return DefaultMaxInputTokens
}

// InputTokens is spec.model.max_input_tokens, or, when agent.yaml has
// none, ContextWindow of the model's name. Only a written value is sent to
// a local server as its context size (Ollama num_ctx): a guessed 128k
// window would make a small machine allocate gigabytes.
func (m *Model) InputTokens() int {
	if m.MaxInputTokens > 0 {
		return m.MaxInputTokens
	}
	return ContextWindow(m.Name)
}

// HistoryBudget is how many tokens of conversation history a request may
// carry: the model's input tokens less the room for the answer
// (max_output_tokens, else DefaultOutputBudget) and a tenth kept as a
// margin, capped at spec.session.context.max_history_tokens unless that
// is 0. It is always at least 1. (Agnx also subtracts the system message
// and tool schemas per request; the margin covers them here.)
func (a *Agent) HistoryBudget() int {
	in := a.Model.InputTokens()
	out := a.Model.MaxOutputTokens
	if out <= 0 {
		out = DefaultOutputBudget
	}
	budget := max(in-out-in/10, 1)
	if c := a.Session.Context.MaxHistoryTokens; c > 0 {
		budget = min(budget, c)
	}
	return budget
}
