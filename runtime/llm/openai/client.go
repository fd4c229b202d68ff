package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
)

// DefaultBaseURL is OpenAI's API root.
const DefaultBaseURL = "https://api.openai.com/v1"

// Key is an API key (llm.Key: it prints and logs as a placeholder).
type Key = llm.Key

// Options configure a Client.
type Options struct {
	// Name is the provider's name in errors ("openai", "openrouter",
	// "llamacpp"); empty means "openai".
	Name string
	// BaseURL is the API root ending in /v1; empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a Bearer token; empty sends no Authorization
	// header, which local servers accept.
	APIKey Key
	// KeyEnv names the environment variable the key comes from, for error
	// sentences ("set OPENAI_API_KEY").
	KeyEnv string
	// Headers are added to every request (OpenRouter's HTTP-Referer and
	// X-Title, for instance).
	Headers map[string]string
	// HTTP tunes retries, timeouts and the transport.
	HTTP llm.Options
}

// Client streams chat calls to one OpenAI-compatible server. It is safe for
// concurrent use.
type Client struct {
	name    string
	url     string
	key     Key
	keyEnv  string
	headers map[string]string
	http    *llm.Client
}

var _ runtime.Provider = (*Client)(nil)

// New returns a Client for o.
func New(o Options) *Client {
	c := &Client{
		name:    o.Name,
		key:     o.APIKey,
		keyEnv:  o.KeyEnv,
		headers: make(map[string]string, len(o.Headers)),
	}
	for k, v := range o.Headers {
		c.headers[k] = v
	}
	if c.name == "" {
		c.name = "openai"
	}
	base := strings.TrimRight(o.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	c.url = base + "/chat/completions"
	srv := llm.Server{Provider: c.name, Name: "OpenAI-compatible server", BaseURL: base}
	srv.Classify = func(status int, msg string) *runtime.ProviderError {
		return c.classify(&srv, status, msg)
	}
	c.http = llm.New(srv, o.HTTP)
	return c
}

// Name returns the provider's name from Options.Name.
func (c *Client) Name() string { return c.name }

// Stream sends req to /chat/completions and streams the answer.
func (c *Client) Stream(ctx context.Context, req *runtime.Request, onDelta func(runtime.Delta)) (*runtime.Response, error) {
	body := llm.NewBody()
	defer body.Release() // after the stream's Close: deferred first
	var err error
	if body.B, err = encodeRequest(body.B, req); err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", c.name, err)
	}
	s, err := c.http.Do(ctx, func() (*http.Request, error) {
		r, err := body.Request(http.MethodPost, c.url)
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "text/event-stream")
		if c.key != "" {
			r.Header.Set("Authorization", "Bearer "+string(c.key))
		}
		for k, v := range c.headers {
			r.Header.Set(k, v)
		}
		return r, nil
	})
	if err != nil {
		return nil, c.http.Server().NamedModel(err, req.Model)
	}
	defer s.Close()
	d := newDecoder(s.Server(), onDelta)
	for {
		line, err := s.ReadLine()
		if errors.Is(err, io.EOF) {
			return d.end()
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

// classify adds the key and model cases to the generic status mapping.
// The server's message is scrubbed of the key in case it echoes it.
func (c *Client) classify(srv *llm.Server, status int, msg string) *runtime.ProviderError {
	msg = c.key.Scrub(msg)
	cause := fmt.Errorf("http %d: %s", status, msg)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return srv.KeyRefused(c.key, c.keyEnv, status, cause, "")
	case status == http.StatusNotFound && strings.Contains(strings.ToLower(msg), "model"):
		return srv.Err(runtime.ErrModelNotFound, status, cause, "%s", msg)
	case status == http.StatusNotFound:
		return srv.Err(runtime.ErrBadRequest, status, cause,
			"%s has no /chat/completions endpoint (404): check spec.model.base_url in the agent's agent.yaml (it usually ends in /v1)",
			srv.Where())
	}
	return srv.StatusError(status, msg)
}
