package ollama

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
)

// DefaultURL is where Ollama listens unless told otherwise.
const DefaultURL = "http://127.0.0.1:11434"

// envHost is where Ollama listens (host:port or a URL) for the agents,
// and their memory embeddings, that set no base_url; unset:
// http://127.0.0.1:11434.
const envHost = "OLLAMA_HOST"

// DefaultBaseURL returns $OLLAMA_HOST, with "http://" added when it has no
// scheme, or DefaultURL when the variable is unset. The composition root
// uses it when the agent sets no base_url.
func DefaultBaseURL() string {
	h := strings.TrimSpace(os.Getenv(envHost))
	if h == "" {
		return DefaultURL
	}
	if !strings.Contains(h, "://") {
		h = "http://" + h
	}
	return strings.TrimRight(h, "/")
}

// Root returns the server root of an Ollama base URL: without a final
// "/" or "/v1" (Agnx's convention, "http://localhost:11434/v1", names the
// OpenAI-style endpoint; this client and doctor use the native API at the
// root).
func Root(baseURL string) string {
	return strings.TrimSuffix(strings.TrimRight(baseURL, "/"), "/v1")
}

// Options configure a Client. The zero value talks to DefaultBaseURL().
type Options struct {
	// BaseURL is the server root, e.g. "http://127.0.0.1:11434". A final
	// "/v1" (Agnx's convention: its Ollama client uses the OpenAI-style
	// endpoint, default "http://localhost:11434/v1") is dropped, since this
	// client speaks Ollama's native /api/chat at the root.
	BaseURL string
	// HTTP tunes retries, timeouts and the transport.
	HTTP llm.Options
}

// Client streams chat calls to one Ollama server. It is safe for
// concurrent use.
type Client struct {
	base string
	http *llm.Client
}

var _ runtime.Provider = (*Client)(nil)

// New returns a Client for o.
func New(o Options) *Client {
	base := Root(o.BaseURL)
	if base == "" {
		base = DefaultBaseURL()
	}
	c := &Client{base: base}
	srv := llm.Server{
		Provider: "ollama",
		Name:     "Ollama",
		BaseURL:  base,
		UnreachableHint: `start it with "ollama serve" or set spec.model.base_url ` +
			"in the agent's agent.yaml",
	}
	srv.Classify = func(status int, msg string) *runtime.ProviderError {
		return classify(&srv, status, msg)
	}
	c.http = llm.New(srv, o.HTTP)
	return c
}

// Name returns "ollama".
func (c *Client) Name() string { return "ollama" }

// Stream sends req to /api/chat and streams the answer.
func (c *Client) Stream(ctx context.Context, req *runtime.Request, onDelta func(runtime.Delta)) (*runtime.Response, error) {
	body := llm.NewBody()
	defer body.Release() // after the stream's Close: deferred first
	var err error
	if body.B, err = encodeRequest(body.B, req); err != nil {
		return nil, fmt.Errorf("ollama: encode request: %w", err)
	}
	url := c.base + "/api/chat"
	s, err := c.http.Do(ctx, func() (*http.Request, error) {
		r, err := body.Request(http.MethodPost, url)
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/x-ndjson")
		return r, nil
	})
	if err != nil {
		return nil, modelError(err, req.Model)
	}
	defer s.Close()
	d := newDecoder(s.Server(), onDelta)
	for {
		line, err := s.ReadLine()
		if errors.Is(err, io.EOF) {
			return nil, s.Server().Interrupted(io.ErrUnexpectedEOF)
		}
		if err != nil {
			return nil, err
		}
		done, err := d.line(line)
		if err != nil {
			return nil, err
		}
		if done {
			return d.response(), nil
		}
	}
}

// classify adds Ollama's own cases to the generic status mapping.
func classify(srv *llm.Server, status int, msg string) *runtime.ProviderError {
	if status == http.StatusNotFound && strings.Contains(msg, "not found") && strings.Contains(msg, "model") {
		return srv.Err(runtime.ErrModelNotFound, status, fmt.Errorf("http 404: %s", msg), "%s", msg)
	}
	return srv.StatusError(status, msg)
}

// modelError rewrites a model-not-found error now that the model's name is
// known, so the sentence names the exact pull command.
func modelError(err error, model string) error {
	var pe *runtime.ProviderError
	if !errors.As(err, &pe) || pe.Kind != runtime.ErrModelNotFound {
		return err
	}
	pe.Message = fmt.Sprintf(`Ollama has no model %q: run "ollama pull %s"`, model, model)
	return pe
}
