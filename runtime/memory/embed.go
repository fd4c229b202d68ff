package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime/llm/ollama"
)

// Embedder turns texts into vectors, one per text, in order, all of one
// dimension.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the model; vectors of another model are recomputed.
	Model() string
}

// Limits on an embeddings call.
const (
	maxBatch     = 32               // texts per request
	maxDim       = 8192             // components per vector
	maxReply     = 16 << 20         // bytes of a response body
	embedTimeout = 60 * time.Second // per request, on a Pi's CPU
)

// Where the hosted providers live and the variables their keys and
// endpoints come from, as for chat.
const (
	openAIURL     = "https://api.openai.com/v1"
	openRouterURL = "https://openrouter.ai/api/v1"
)

// NewEmbedder returns the embeddings client of an agent's
// memory.embeddings: provider ollama, openai or openrouter, the model, and
// base_url (empty: the provider's default; for Ollama the server root,
// a final /v1 dropped). env reads the environment (os.Getenv) for
// OPENAI_API_KEY, OPENROUTER_API_KEY, OPENAI_BASE_URL, OPENROUTER_BASE_URL
// and OLLAMA_HOST; client nil means http.DefaultClient.
func NewEmbedder(provider, model, baseURL string, env func(string) string, client *http.Client) (Embedder, error) {
	if strings.TrimSpace(model) == "" {
		return nil, errors.New("memory.embeddings needs a model: set memory.embeddings.model (e.g. nomic-embed-text)")
	}
	if client == nil {
		client = http.DefaultClient
	}
	if env == nil {
		env = func(string) string { return "" }
	}
	or := func(a, b string) string {
		if a = strings.TrimSpace(a); a != "" {
			return a
		}
		return b
	}
	switch provider {
	case "ollama":
		base := ollama.Root(baseURL)
		if base == "" {
			base = ollama.Root(or(hostURL(env("OLLAMA_HOST")), ollama.DefaultURL))
		}
		return &ollamaEmbedder{url: base + "/api/embed", model: model, http: client, limit: maxReply}, nil
	case "openai":
		key, base := env("OPENAI_API_KEY"), or(baseURL, env("OPENAI_BASE_URL"))
		if key == "" && base == "" {
			return nil, errors.New("memory.embeddings provider openai needs an API key: export OPENAI_API_KEY, or set memory.embeddings.base_url to a local OpenAI-compatible server")
		}
		return &openAIEmbedder{url: strings.TrimRight(or(base, openAIURL), "/") + "/embeddings", model: model, key: key, http: client, limit: maxReply}, nil
	case "openrouter":
		key := env("OPENROUTER_API_KEY")
		if key == "" {
			return nil, errors.New("memory.embeddings provider openrouter needs an API key: export OPENROUTER_API_KEY")
		}
		base := or(baseURL, or(env("OPENROUTER_BASE_URL"), openRouterURL))
		return &openAIEmbedder{url: strings.TrimRight(base, "/") + "/embeddings", model: model, key: key, http: client, limit: maxReply}, nil
	}
	return nil, fmt.Errorf("unknown provider %q in memory.embeddings.provider: use ollama, openai or openrouter", provider)
}

func hostURL(h string) string {
	h = strings.TrimSpace(h)
	if h != "" && !strings.Contains(h, "://") {
		h = "http://" + h
	}
	return h
}

// post sends one JSON request and decodes the reply into out, bounded in
// time and size. what names the server in errors.
func post(ctx context.Context, hc *http.Client, url, key, what string, limit int64, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, embedTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s embeddings: %w", what, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s embeddings at %s: %w", what, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fmt.Errorf("%s embeddings at %s: read the reply: %w", what, url, err)
	}
	if int64(len(data)) > limit {
		return fmt.Errorf("%s embeddings at %s: the reply is over %d KiB: check base_url names an embeddings server", what, url, limit>>10)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s embeddings at %s: HTTP %d: %s", what, url, resp.StatusCode, cut(strings.TrimSpace(string(data)), 200))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s embeddings at %s: the reply is not the expected JSON: %w", what, url, err)
	}
	return nil
}

// checkVectors says whether vs are n vectors of one sane dimension.
func checkVectors(vs [][]float32, n int, what string) error {
	if len(vs) != n {
		return fmt.Errorf("%s embeddings: %d vectors for %d texts: check the model is an embedding model", what, len(vs), n)
	}
	for _, v := range vs {
		if len(v) == 0 || len(v) > maxDim || len(v) != len(vs[0]) {
			return fmt.Errorf("%s embeddings: a vector of %d components (first %d, at most %d): check the model is an embedding model",
				what, len(v), len(vs[0]), maxDim)
		}
	}
	return nil
}

// batches calls fn on texts maxBatch at a time and joins the vectors.
func batches(ctx context.Context, texts []string, fn func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for len(texts) > 0 {
		n := min(len(texts), maxBatch)
		vs, err := fn(ctx, texts[:n])
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && len(vs) > 0 && len(vs[0]) != len(out[0]) {
			return nil, errors.New("embeddings: the server changed the vector dimension between batches: check the model")
		}
		out = append(out, vs...)
		texts = texts[n:]
	}
	return out, nil
}
