package memory

import (
	"context"
	"fmt"
	"net/http"
)

// ollamaEmbedder calls Ollama's native POST /api/embed.
type ollamaEmbedder struct {
	url, model string
	http       *http.Client
	limit      int64 // bytes of a reply
}

var _ Embedder = (*ollamaEmbedder)(nil)

func (e *ollamaEmbedder) Model() string { return "ollama/" + e.model }

func (e *ollamaEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return batches(ctx, texts, func(ctx context.Context, in []string) ([][]float32, error) {
		var out struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		req := map[string]any{"model": e.model, "input": in}
		if err := post(ctx, e.http, e.url, "", "ollama", e.limit, req, &out); err != nil {
			return nil, err
		}
		return out.Embeddings, checkVectors(out.Embeddings, len(in), "ollama")
	})
}

// openAIEmbedder calls an OpenAI-compatible POST {base_url}/embeddings.
type openAIEmbedder struct {
	url, model string
	key        string
	http       *http.Client
	limit      int64 // bytes of a reply
}

var _ Embedder = (*openAIEmbedder)(nil)

func (e *openAIEmbedder) Model() string { return "openai/" + e.model }

// String keeps the key out of formatted values.
func (e *openAIEmbedder) String() string { return fmt.Sprintf("embeddings %s at %s", e.model, e.url) }

func (e *openAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return batches(ctx, texts, func(ctx context.Context, in []string) ([][]float32, error) {
		var out struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		req := map[string]any{"model": e.model, "input": in}
		if err := post(ctx, e.http, e.url, e.key, "openai", e.limit, req, &out); err != nil {
			return nil, err
		}
		vs := make([][]float32, len(in))
		for _, d := range out.Data {
			if d.Index < 0 || d.Index >= len(in) || vs[d.Index] != nil {
				return nil, fmt.Errorf("openai embeddings: the reply has a bad or repeated index %d: check the server", d.Index)
			}
			vs[d.Index] = d.Embedding
		}
		if len(out.Data) != len(in) {
			return nil, fmt.Errorf("openai embeddings: %d vectors for %d texts: check the model is an embedding model", len(out.Data), len(in))
		}
		return vs, checkVectors(vs, len(in), "openai")
	})
}
