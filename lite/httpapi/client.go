package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// ClientOptions tune a Client; zero fields mean the defaults.
type ClientOptions struct {
	// APIToken is sent as a bearer token on /api/v1 routes.
	APIToken string
	// AdminToken is sent on admin routes (the server's admin token is
	// independent of its API token).
	AdminToken string
	// SenderID is the sender_id of the messages the client sends.
	SenderID string
	// Gateway is the gateway of the sessions the client creates ("cli");
	// empty: the server's default, "http".
	Gateway string
	// DialTimeout bounds connecting (default 3 s).
	DialTimeout time.Duration
	// Timeout bounds a request that is neither a stream nor a synchronous
	// message, when its ctx has no deadline (default 30 s).
	Timeout time.Duration
	// Resumes is how many times in a row a dropped event stream is resumed
	// before giving up (default 5); a resume that delivers events resets
	// the count.
	Resumes int
	// HTTP replaces the client's own http.Client (tests).
	HTTP *http.Client
}

// Client talks to an agnx-lite daemon over its HTTP API. It is safe for
// concurrent use.
type Client struct {
	base string
	o    ClientOptions
	hc   *http.Client
}

// NewClient returns a client of the daemon at baseURL
// ("http://127.0.0.1:8080").
func NewClient(baseURL string, o ClientOptions) *Client {
	if o.DialTimeout <= 0 {
		o.DialTimeout = 3 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Resumes <= 0 {
		o.Resumes = 5
	}
	hc := o.HTTP
	if hc == nil {
		// No overall timeout: streams and synchronous messages last as long
		// as a turn. Calls that should be short get a ctx deadline instead.
		hc = &http.Client{Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     60 * time.Second,
		}}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), o: o, hc: hc}
}

// URL is the daemon's base URL.
func (c *Client) URL() string { return c.base }

// ErrNoDaemon is wrapped by the error of a call that found nothing
// listening at the client's URL.
var ErrNoDaemon = errors.New("no agnx-lite daemon answers")

type noDaemonError struct{ url string }

func (e *noDaemonError) Error() string { return ErrNoDaemon.Error() + " at " + e.url }
func (e *noDaemonError) Unwrap() error { return ErrNoDaemon }

// ProblemError is an error answer of the daemon: an RFC 7807 problem, or
// the text or empty body of a refusal. Its Error is the problem's detail:
// one sentence for the user.
type ProblemError struct {
	Status int
	// Code is the problem's lite code (its code member, else the last
	// part of an urn:agnx-lite:problem:<code> type): session_not_found,
	// agent_not_found, ...; unauthorized and forbidden for refusals.
	Code   string
	Title  string
	Detail string
}

func (e *ProblemError) Error() string {
	switch {
	case e.Detail != "":
		return e.Detail
	case e.Title != "":
		return e.Title
	}
	return fmt.Sprintf("the daemon answered %d %s", e.Status, http.StatusText(e.Status))
}

// request is one call: what to send and how.
type request struct {
	method, path string
	body         any
	admin        bool
	// accept is the media type expected; "" means JSON.
	accept      string
	lastEventID string
}

// open sends r and returns the response when its status is 2xx; any
// other status becomes a *ProblemError.
func (c *Client) open(ctx context.Context, r request) (*http.Response, error) {
	var body io.Reader
	if r.body != nil {
		data, err := json.Marshal(r.body)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, body)
	if err != nil {
		return nil, fmt.Errorf("daemon URL %q: %w", c.base, err)
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if r.accept != "" {
		req.Header.Set("Accept", r.accept)
	}
	if r.lastEventID != "" {
		req.Header.Set("Last-Event-ID", r.lastEventID)
	}
	token := c.o.APIToken
	if r.admin {
		token = c.o.AdminToken
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, readProblem(resp)
	}
	return resp, nil
}

func (c *Client) transportError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, syscall.ECONNREFUSED):
		return &noDaemonError{url: c.base}
	}
	return fmt.Errorf("cannot reach the agnx-lite daemon at %s: %w", c.base, err)
}

func readProblem(resp *http.Response) error {
	pe := &ProblemError{Status: resp.StatusCode}
	var p problem
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(data, &p) == nil && p.Type != "" {
		pe.Code = cmp.Or(p.Code, strings.TrimPrefix(p.Type, litePrefix))
		pe.Title, pe.Detail = p.Title, p.Detail
		return pe
	}
	// A refusal: 401 with no body, 403 "Admin access denied"; the server
	// says what to do in WWW-Authenticate.
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		pe.Code = codeUnauthorized
	case http.StatusForbidden:
		pe.Code = codeForbidden
	}
	text := strings.TrimSpace(string(data))
	if !utf8.ValidString(text) || len(text) > 200 {
		text = ""
	}
	pe.Detail = text
	if hint := authHint(resp.Header.Get("WWW-Authenticate")); hint != "" {
		pe.Detail = strings.TrimSuffix(cmp.Or(text, http.StatusText(resp.StatusCode)), ".") + ": " + hint
	}
	return pe
}

// authHint returns the error_description of a WWW-Authenticate header.
func authHint(h string) string {
	_, rest, ok := strings.Cut(h, `error_description="`)
	if !ok {
		return ""
	}
	hint, _, _ := strings.Cut(rest, `"`)
	return hint
}

// call sends r and decodes a JSON answer into out (unless out is nil).
// Without a deadline on ctx, it is bounded by Options.Timeout unless long
// is set.
func (c *Client) call(ctx context.Context, r request, out any, long bool) error {
	if _, ok := ctx.Deadline(); !ok && !long {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.o.Timeout)
		defer cancel()
	}
	resp, err := c.open(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("read the answer of %s %s: %w", r.method, r.path, err)
	}
	return nil
}
