package toolset

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// errMCPPrivate is why an agent's MCP url server was not reached.
var errMCPPrivate = errors.New("an agent's MCP server may not be on a loopback, link-local or private address: " +
	"add allow_private: true to its entry, or declare it in agnx.yaml's mcp.servers")

// mcpTransport is the HTTP transport of every http and sse MCP server. It
// refuses, when it connects (after DNS, so a name resolving to this host is
// caught too), non-public addresses, except for the origins entries were
// allowed to reach privately: agnx.yaml's servers (the operator's) and an
// agent's entry with allow_private. Redirects go through it again.
type mcpTransport struct {
	guarded, open *http.Transport

	mu      sync.Mutex
	private map[string]bool // scheme://host:port
}

func newMCPTransport() *mcpTransport {
	mk := func(guard bool) *http.Transport {
		d := &net.Dialer{Timeout: 10 * time.Second}
		if guard {
			d.Control = mcpDialControl
		}
		return &http.Transport{DialContext: d.DialContext, TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second, Proxy: nil}
	}
	return &mcpTransport{guarded: mk(true), open: mk(false), private: map[string]bool{}}
}

// client is the HTTP client the manager uses. No overall timeout: an
// event stream stays open; calls are bounded by the manager.
func (t *mcpTransport) client() *http.Client {
	return &http.Client{Transport: t, CheckRedirect: func(_ *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		return nil
	}}
}

// allow lets raw's origin reach private addresses.
func (t *mcpTransport) allow(raw string) {
	if o := origin(raw); o != "" {
		t.mu.Lock()
		t.private[o] = true
		t.mu.Unlock()
	}
}

// RoundTrip sends req through the guarded transport unless its origin was
// allowed.
func (t *mcpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	ok := t.private[origin(req.URL.String())]
	t.mu.Unlock()
	if ok {
		return t.open.RoundTrip(req)
	}
	return t.guarded.RoundTrip(req)
}

// closeIdle closes the kept-alive connections.
func (t *mcpTransport) closeIdle() {
	t.guarded.CloseIdleConnections()
	t.open.CloseIdleConnections()
}

// origin is scheme://host:port of an http(s) URL, the port made explicit;
// "" for anything else.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch {
	case port != "":
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	default:
		return ""
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// mcpDialControl refuses every address that is not on the public internet,
// as the web tool does.
func mcpDialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w (%s)", errMCPPrivate, address)
	}
	a := ap.Addr().Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(a) || netip.MustParsePrefix("fc00::/7").Contains(a) {
		return fmt.Errorf("%w (%s)", errMCPPrivate, address)
	}
	return nil
}

// ReachMCP asks an http or sse MCP server's url once (a GET, as a client
// opening its stream would) through the transport the daemon uses, so
// that a server an agent may not reach privately is refused as it would
// be; private allows it. It returns the HTTP status, whatever it is.
func ReachMCP(ctx context.Context, url string, private bool) (int, error) {
	t := newMCPTransport()
	defer t.closeIdle()
	if private {
		t.allow(url)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := t.client().Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
