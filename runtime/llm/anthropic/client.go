package anthropic

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

// DefaultBaseURL is Anthropic's API root.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultVersion is the anthropic-version header sent when Options.Version
// is empty.
const DefaultVersion = "2023-06-01"

// Key is an API key (llm.Key: it prints and logs as a placeholder).
type Key = llm.Key

// Options configure a Client.
type Options struct {
	// BaseURL is the API root, with or without a final /v1 (Ollama:
	// http://localhost:11434); empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as x-api-key; empty sends none, which local
	// compatible servers accept.
	APIKey Key
	// KeyEnv names the environment variable the key comes from, for error
	// sentences ("set ANTHROPIC_API_KEY").
	KeyEnv string
	// Version is the anthropic-version header; empty means DefaultVersion.
	Version string
	// HTTP tunes retries, timeouts and the transport.
	HTTP llm.Options
}

// Client streams Messages API calls to one server. It is safe for
// concurrent use.
type Client struct {
	url     string
	key     Key
	keyEnv  string
	version string
	http    *llm.Client
}

var _ runtime.Provider = (*Client)(nil)

// New returns a Client for o.
func New(o Options) *Client {
	c := &Client{key: o.APIKey, keyEnv: o.KeyEnv, version: o.Version}
	if c.version == "" {
		c.version = DefaultVersion
	}
	base := strings.TrimRight(o.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	if strings.HasSuffix(base, "/v1") {
		c.url = base + "/messages"
	} else {
		c.url = base + "/v1/messages"
	}
	srv := llm.Server{Provider: "anthropic", Name: "Anthropic API", BaseURL: base}
	if base != DefaultBaseURL {
		srv.Name = "Anthropic-compatible server"
	}
	srv.Classify = func(status int, msg string) *runtime.ProviderError {
		return c.classify(&srv, status, msg)
	}
	c.http = llm.New(srv, o.HTTP)
	return c
}

// Stream sends req to /v1/messages and streams the answer.
func (c *Client) Stream(ctx context.Context, req *runtime.Request, onDelta func(runtime.Delta)) (*runtime.Response, error) {
	body := llm.NewBody()
	defer body.Release() // after the stream's Close: deferred first
	var err error
	if body.B, err = encodeRequest(body.B, req); err != nil {
		return nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	s, err := c.http.Do(ctx, func() (*http.Request, error) {
		r, err := body.Request(http.MethodPost, c.url)
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "text/event-stream")
		r.Header.Set("anthropic-version", c.version)
		if c.key != "" {
			r.Header.Set("x-api-key", string(c.key))
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
			return nil, c.http.Server().NamedModel(err, req.Model)
		}
		if done {
			return d.response()
		}
	}
}

// classify adds the key, model and overload cases to the generic status
// mapping. The server's message is scrubbed of the key in case it echoes it.
func (c *Client) classify(srv *llm.Server, status int, msg string) *runtime.ProviderError {
	msg = c.key.Scrub(msg)
	cause := fmt.Errorf("http %d: %s", status, msg)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return srv.KeyRefused(c.key, c.keyEnv, status, cause, msg)
	case status == http.StatusNotFound && strings.Contains(strings.ToLower(msg), "model"):
		return srv.Err(runtime.ErrModelNotFound, status, cause, "%s", msg)
	case status == http.StatusNotFound:
		return srv.Err(runtime.ErrBadRequest, status, cause,
			"%s has no /v1/messages endpoint (404): check spec.model.base_url in the agent's agent.yaml (the server's root, with or without /v1)",
			srv.Where())
	case status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge:
		return srv.Err(runtime.ErrBadRequest, status, cause,
			"%s rejected the request (%d: %s): check spec.model in the agent's agent.yaml, or start a new session if the conversation is at fault",
			srv.Where(), status, msg)
	case status == 529:
		return srv.Err(runtime.ErrServer, status, cause,
			"%s is overloaded (529: %s): try again in a few minutes", srv.Where(), msg)
	}
	return srv.StatusError(status, msg)
}
