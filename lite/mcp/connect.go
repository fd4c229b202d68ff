package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFrame bounds one message from a server: the SDK buffers a message
// whole before decoding it, so this is what one answer may cost, once.
// A bigger one ends the session.
const maxFrame = 8 << 20

// bigFrame is the size of a stdio message past which the session is
// ended once it is unused: the SDK's decoder keeps the buffer it grew
// for the largest message for as long as the session lives.
const bigFrame = 2 << 20

// lineMeter passes a stdio server's output on, and marks a message
// (a line) longer than bigFrame.
type lineMeter struct {
	r    io.ReadCloser
	line int
	big  *atomic.Bool
}

func (l *lineMeter) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	b := p[:n]
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.line += len(b)
			break
		}
		l.line += i
		b = b[i+1:]
		if l.line > bigFrame {
			l.big.Store(true)
		}
		l.line = 0
	}
	if l.line > bigFrame {
		l.big.Store(true)
	}
	return n, err
}

func (l *lineMeter) Close() error { return l.r.Close() }

// The transports an entry may name.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// transport is the entry's transport, with stdio and http guessed from
// Command and URL when unset.
func transport(s Server) string {
	switch {
	case s.Transport != "":
		return s.Transport
	case s.URL != "":
		return TransportHTTP
	}
	return TransportStdio
}

// validate checks what the manager relies on in an entry.
func validate(s Server) error {
	if s.Name == "" || len(s.Name) > 64 {
		return fmt.Errorf("an MCP server entry needs a name of 1 to 64 characters (got %q)", s.Name)
	}
	switch transport(s) {
	case TransportStdio:
		if s.Command == "" {
			return fmt.Errorf("MCP server %s has no command: give it a command, or a url", quote(s.Name))
		}
	case TransportHTTP, TransportSSE:
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("MCP server %s has url %q, which is not an http(s) URL: fix its entry", quote(s.Name), s.URL)
		}
	default:
		return fmt.Errorf("MCP server %s has transport %q: use stdio, http or sse", quote(s.Name), s.Transport)
	}
	return nil
}

// expand replaces ${env:NAME}, ${NAME} and $NAME in v with the daemon's
// environment.
func expand(v string, env func(string) string) string {
	return os.Expand(v, func(k string) string { return env(strings.TrimPrefix(k, "env:")) })
}

func expandAll(m map[string]string, env func(string) string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = expand(v, env)
	}
	return out
}

// cacheKey names an entry's tool list in the cache: a hash of all that
// changes what runs (values expanded, so a changed secret misses too,
// without being stored).
func cacheKey(agent, workspace string, s Server, env func(string) string) string {
	_ = agent // two agents with the same entry and workspace share a list
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode([]any{"v1", workspace, s.Name, transport(s), s.Command, s.Args, sorted(expandAll(s.Env, env)),
		s.Network, s.ReadOnly, s.URL, sorted(expandAll(s.Headers, env))})
	return "mcp.tools." + hex.EncodeToString(h.Sum(nil)[:16])
}

func sorted(m map[string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, [2]string{k, m[k]})
	}
	return out
}

// connect starts the server (stdio) or opens its session (http, sse),
// initializes it, and returns the session. It is bounded by the call
// timeout.
func (s *server) connect() (*conn, error) {
	// The HTTP transports keep the context for the session's streams: it
	// lives as long as the session; a timer bounds the start alone.
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{closed: make(chan struct{}), cancel: cancel}
	timer := time.AfterFunc(s.callTimeout(), cancel)
	defer timer.Stop()
	if f := s.m.stopped; f != nil {
		c.onStop = func() { f(s.agent, s.cfg.Name) }
	}
	var t sdk.Transport
	kind := transport(s.cfg)
	if s.m.dial != nil {
		var err error
		if t, err = s.m.dial(ctx, s.cfg); err != nil {
			cancel()
			return nil, err
		}
		kind = "dial"
	}
	switch kind {
	case TransportStdio:
		if s.m.o.Spawn == nil {
			cancel()
			return nil, fmt.Errorf("MCP server %s cannot start: this daemon cannot run stdio servers", quote(s.cfg.Name))
		}
		srv := s.cfg
		srv.Env = expandAll(srv.Env, s.m.o.Env)
		proc, err := s.m.o.Spawn(ctx, s.workspace, srv)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("MCP server %s cannot start: %w", quote(s.cfg.Name), err)
		}
		c.proc = proc
		t = &sdk.IOTransport{Reader: &lineMeter{r: proc.Stdout, big: &c.bigFrame}, Writer: proc.Stdin,
			MaxLineLength: maxFrame}
	case TransportHTTP:
		t = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxRetries: 2,
			MaxEventSize: maxFrame}
	case TransportSSE:
		t = &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxEventSize: maxFrame}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "agnx-lite", Version: "1"}, &sdk.ClientOptions{
		Capabilities:           &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { go s.listChanged(c) },
	})
	client.AddSendingMiddleware(trimTools)
	cs, err := client.Connect(ctx, t, nil)
	if err == nil && !timer.Stop() {
		_ = cs.Close()
		err = fmt.Errorf("it did not answer within %s", s.callTimeout())
	}
	if err != nil {
		cancel()
		if c.proc != nil {
			c.proc.Kill()
			_ = c.proc.Wait() // reaped: its stderr is whole
			_ = c.proc.Stdout.Close()
			_ = c.proc.Stdin.Close()
		}
		return nil, fmt.Errorf("MCP server %s did not start its session (%v%s): check its command or url",
			quote(s.cfg.Name), err, c.stderr())
	}
	c.cs = cs
	if r := cs.InitializeResult(); r != nil && r.Capabilities != nil {
		c.resources = r.Capabilities.Resources != nil
	}
	return c, nil
}

// httpClient is the manager's HTTP client with the entry's headers added
// to each request.
func (s *server) httpClient() *http.Client {
	headers := expandAll(s.cfg.Headers, s.m.o.Env)
	if len(headers) == 0 {
		return s.m.o.HTTPClient
	}
	c := *s.m.o.HTTPClient
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = headerTransport{base: base, headers: headers}
	return &c
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
