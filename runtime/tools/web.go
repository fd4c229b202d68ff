package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Web is Agnx's web tool: action search asks the search backend, action
// fetch gets a URL and returns its readable text ("Source: <url>", a
// blank line, the text, at most 50 KiB). Fetch refuses loopback,
// link-local, private and other non-public addresses unless AllowPrivate
// is set; the check is made on the address actually dialled, so DNS
// rebinding and redirects cannot get around it.
type Web struct {
	AllowPrivate bool
	// Search is the search backend; nil: search says how to set one up.
	Search *WebSearch
	// MaxBytes caps the body read; default 1 MiB.
	MaxBytes int64
	// Timeout bounds the whole fetch; default 20 s.
	Timeout time.Duration
	client  *http.Client
}

var _ runtime.Tool = (*Web)(nil)

type webArgs struct {
	Action string `json:"action"`
	Query  string `json:"query"`
	Count  *int   `json:"count"`
	URL    string `json:"url"`
}

const webSchema = `{"type":"object","properties":{` +
	`"action":{"type":"string","enum":["search","fetch"],"description":"Action to perform"},` +
	`"query":{"type":"string","description":"(search) The search query"},` +
	`"count":{"type":"integer","description":"(search) Number of results to return (1-20, default 5)"},` +
	`"url":{"type":"string","description":"(fetch) The URL to fetch (http or https)"}},` +
	`"required":["action"]}`

// maxWebText caps what fetch returns: Agnx's 50 KiB.
const maxWebText = 50 << 10

// Spec describes web to the model.
func (t *Web) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "web", Description: "Web tools. Actions: 'search' the web, 'fetch' a web page as text.",
		Schema: []byte(webSchema)}
}

// Subject is what policies match: the URL of a fetch, the query of a
// search.
func (t *Web) Subject(args []byte) string {
	var a webArgs
	_ = decodeArgs(args, &a)
	if a.action() == "search" {
		return a.Query
	}
	return a.URL
}

// action is the action asked for; a call with only a url (lite's web
// tool before it had actions) is a fetch.
func (a webArgs) action() string {
	if a.Action == "" && a.URL != "" {
		return "fetch"
	}
	return a.Action
}

var errPrivate = errors.New("non-public address")

func (t *Web) httpClient() *http.Client {
	if t.client != nil {
		return t.client
	}
	d := &net.Dialer{Timeout: 10 * time.Second}
	if !t.AllowPrivate {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !public(ap.Addr()) {
				return fmt.Errorf("%w %s", errPrivate, address)
			}
			return nil
		}
	}
	tr := &http.Transport{DialContext: d.DialContext, TLSHandshakeTimeout: 10 * time.Second,
		ResponseHeaderTimeout: 15 * time.Second, MaxIdleConns: 2, IdleConnTimeout: 30 * time.Second, Proxy: nil}
	t.client = &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		return nil
	}}
	return t.client
}

// public reports whether an address is on the public internet.
func public(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsValid() && a.IsGlobalUnicast() && !a.IsPrivate() && !a.IsLoopback() && !a.IsLinkLocalUnicast() &&
		!netip.MustParsePrefix("100.64.0.0/10").Contains(a) && !netip.MustParsePrefix("fc00::/7").Contains(a)
}

// Run searches or fetches.
func (t *Web) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a webArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("Tool execution failed: " + err.Error()), nil
	}
	switch a.action() {
	case "fetch":
		return t.fetch(ctx, a)
	case "search":
		if strings.TrimSpace(a.Query) == "" {
			return runtime.ErrorResult("error: web: 'query' is required for search action"), nil
		}
		count := 5
		if a.Count != nil {
			count = min(max(*a.Count, 1), 20)
		}
		hits, err := t.Search.search(ctx, a.Query, count)
		if err != nil {
			if ctx.Err() != nil {
				return runtime.Result{}, ctx.Err()
			}
			return runtime.ErrorResult("error: web: " + err.Error()), nil
		}
		return runtime.Result{Content: strings.ToValidUTF8(formatHits(hits), "\uFFFD")}, nil
	}
	return runtime.ErrorResult(fmt.Sprintf("error: web: unknown action %q: use search or fetch", a.Action)), nil
}

// fetch gets a page.
func (t *Web) fetch(ctx context.Context, a webArgs) (runtime.Result, error) {
	if strings.TrimSpace(a.URL) == "" {
		return runtime.ErrorResult("error: web: 'url' is required for fetch action"), nil
	}
	u, err := url.Parse(strings.TrimSpace(a.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return runtime.ErrorResult(fmt.Sprintf("error: web: %q is not an http or https URL", a.URL)), nil
	}
	timeout, limit := t.Timeout, t.MaxBytes
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	if limit <= 0 {
		limit = 1 << 20
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return runtime.ErrorResult("error: web: " + err.Error()), nil
	}
	req.Header.Set("User-Agent", "agnx-lite (+https://github.com/agnx-lite/agnx-lite)")
	req.Header.Set("Accept", "text/html, text/plain, application/json;q=0.9, */*;q=0.5")
	resp, err := t.httpClient().Do(req)
	if err != nil {
		if errors.Is(err, errPrivate) {
			return runtime.ErrorResult(fmt.Sprintf("error: web: %s resolves to a local or private address, which this agent may not fetch", u.Host)), nil
		}
		return runtime.ErrorResult(fmt.Sprintf("error: web: fetching %s failed: %v", u.Redacted(), err)), nil
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return runtime.ErrorResult(fmt.Sprintf("HTTP error: %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))), nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return runtime.ErrorResult(fmt.Sprintf("error: web: reading %s failed: %v", u.Redacted(), err)), nil
	}
	cut := int64(len(body)) > limit
	if cut {
		body = body[:limit]
	}
	text := "Source: " + u.Redacted() + "\n\n" + readable(resp.Header.Get("Content-Type"), body)
	if len(text) > maxWebText {
		text = strings.ToValidUTF8(text[:maxWebText], "")
		cut = true
	}
	if cut {
		text += "\n\n[content truncated at 50 KB]"
	}
	return runtime.Result{Content: text}, nil
}

// readable turns a body into text the model can read: HTML loses its
// markup, text passes through, binary is described.
func readable(contentType string, body []byte) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml" || (mt == "" && looksHTML(body)):
		return HTMLText(string(body))
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "json"), strings.HasSuffix(mt, "xml"), mt == "":
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	return fmt.Sprintf("[%s content, %d bytes, not shown]", mt, len(body))
}

func looksHTML(b []byte) bool {
	head := strings.ToLower(string(b[:min(len(b), 512)]))
	return strings.Contains(head, "<html") || strings.Contains(head, "<!doctype html")
}
