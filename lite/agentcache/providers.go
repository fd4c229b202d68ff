package agentcache

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
	"github.com/agnx-lite/agnx-lite/runtime/llm/anthropic"
	"github.com/agnx-lite/agnx-lite/runtime/llm/ollama"
	"github.com/agnx-lite/agnx-lite/runtime/llm/openai"
)

// Where the hosted providers live, and the environment
// variables their keys come from (keys never come from files). The
// *_BASE_URL variables (the SDKs' convention) move a provider's default
// endpoint for every agent that sets no spec.model.base_url: a proxy in
// front of the provider, or a test's fake.
const (
	openRouterURL = "https://openrouter.ai/api/v1"
	// envOpenAI is the API key of provider openai (and of embeddings
	// from it).
	envOpenAI = "OPENAI_API_KEY"
	// envOpenRouter is the API key of provider openrouter.
	envOpenRouter = "OPENROUTER_API_KEY"
	// envOpenAIURL replaces OpenAI's endpoint for agents that set no
	// spec.model.base_url: a proxy, or an OpenAI-compatible server (then
	// no key is needed).
	envOpenAIURL = "OPENAI_BASE_URL"
	// envOpenRouterURL replaces OpenRouter's endpoint for agents that set
	// no spec.model.base_url.
	envOpenRouterURL = "OPENROUTER_BASE_URL"
	// envAnthropic is the API key of provider anthropic.
	envAnthropic = "ANTHROPIC_API_KEY"
	// envAnthropicURL replaces Anthropic's endpoint for agents that set
	// no spec.model.base_url: a proxy, or a server that speaks the
	// Anthropic API (then no key is needed).
	envAnthropicURL = "ANTHROPIC_BASE_URL"
)

// baseURL is the agent's base_url, else the provider's variable, else def.
func baseURL(m agents.Model, env, def string) string {
	if m.BaseURL != "" {
		return m.BaseURL
	}
	if v := strings.TrimSpace(os.Getenv(env)); v != "" {
		return v
	}
	return def
}

// sharedHTTP is the one HTTP client every provider uses: agents come and
// go (the LRU builds a provider per load), connections to the model
// servers are pooled once for the process, never per agent.
var sharedHTTP = sync.OnceValue(func() *http.Client { return llm.NewHTTPClient(0) })

// NewProvider builds the client for an agent's spec.model. This map is the
// one place that knows the concrete providers.
func NewProvider(m agents.Model) (runtime.Provider, error) {
	hc := llm.Options{HTTPClient: sharedHTTP()}
	switch m.Provider {
	case "ollama":
		return ollama.New(ollama.Options{BaseURL: m.BaseURL, HTTP: hc}), nil
	case "openai":
		key, base := os.Getenv(envOpenAI), baseURL(m, envOpenAIURL, "")
		if key == "" && base == "" {
			return nil, fmt.Errorf("provider openai needs an API key: export %s, or set spec.model.base_url to a local OpenAI-compatible server", envOpenAI)
		}
		return openai.New(openai.Options{Name: "openai", BaseURL: base, APIKey: openai.Key(key), KeyEnv: envOpenAI, HTTP: hc}), nil
	case "openrouter":
		key := os.Getenv(envOpenRouter)
		if key == "" {
			return nil, fmt.Errorf("provider openrouter needs an API key: export %s", envOpenRouter)
		}
		base := baseURL(m, envOpenRouterURL, openRouterURL)
		return openai.New(openai.Options{Name: "openrouter", BaseURL: base, APIKey: openai.Key(key), KeyEnv: envOpenRouter,
			Headers: map[string]string{"X-Title": "agnx-lite"}, HTTP: hc}), nil
	case "anthropic":
		key, base := os.Getenv(envAnthropic), baseURL(m, envAnthropicURL, "")
		if key == "" && base == "" {
			return nil, fmt.Errorf("provider anthropic needs an API key: export %s, or set spec.model.base_url to a server that speaks the Anthropic API (Ollama: http://localhost:11434)", envAnthropic)
		}
		return anthropic.New(anthropic.Options{BaseURL: base, APIKey: anthropic.Key(key), KeyEnv: envAnthropic, HTTP: hc}), nil
	}
	return nil, fmt.Errorf("unknown provider %q in spec.model.provider: use ollama, openai, openrouter or anthropic", m.Provider)
}
