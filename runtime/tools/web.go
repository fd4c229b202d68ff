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

// Web fetches a URL and returns its readable text. Loopback, link-local,
// private and other non-public addresses are refused unless AllowPrivate
// is set; the check is made on the address actually dialled, so DNS
// rebinding and redirects cannot get around it.
type Web struct {
	AllowPrivate bool
	// MaxBytes caps the body read; default 1 MiB.
	MaxBytes int64
	// Timeout bounds the whole fetch; default 20 s.
	Timeout time.Duration
	client  *http.Client
}

var _ runtime.Tool = (*Web)(nil)

type webArgs struct {
	URL string `json:"url"`
}

const webSchema = `{"type":"object","properties":{` +
	`"url":{"type":"string","description":"The http:// or https:// URL to fetch"}},` +
	`"required":["url"],"additionalProperties":false}`

// Spec describes web to the model.
func (t *Web) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "web", Description: "Fetch a web page (HTTP GET) and return its readable text.",
		Schema: []byte(webSchema)}
}

// Subject is what policies match: the URL.
func (t *Web) Subject(args []byte) string {
	var a webArgs
	_ = decodeArgs(args, &a)
	return a.URL
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

// Run fetches the page.
func (t *Web) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a webArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("error: web: " + err.Error()), nil
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
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return runtime.ErrorResult(fmt.Sprintf("error: web: reading %s failed: %v", u.Redacted(), err)), nil
	}
	cut := int64(len(body)) > limit
	if cut {
		body = body[:limit]
	}
	text := readable(resp.Header.Get("Content-Type"), body)
	if cut {
		text += fmt.Sprintf("\n[... the page is longer than %d KiB; the rest was not read ...]", limit>>10)
	}
	res := runtime.Result{Content: fmt.Sprintf("%s (%d %s)\n\n%s", resp.Request.URL.Redacted(), resp.StatusCode,
		http.StatusText(resp.StatusCode), text)}
	res.IsError = resp.StatusCode >= 400
	return res, nil
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
