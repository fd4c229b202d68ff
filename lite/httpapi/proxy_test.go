package httpapi_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// syncBuffer is a log sink the server's goroutines may write to while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// forwarded lists a forwarding header of each kind a reverse proxy, a CDN
// or a tunnel on the box adds.
var forwarded = []string{
	"X-Forwarded-For: 203.0.113.9",
	"Forwarded: for=203.0.113.9;proto=https",
	"X-Real-IP: 203.0.113.9",
	"CF-Connecting-IP: 203.0.113.9",
	"True-Client-IP: 203.0.113.9",
	"X-Forwarded-Host: agnx.example.org",
	"X-Client-IP: 203.0.113.9",
	"Fly-Client-IP: 203.0.113.9",
}

// A reverse proxy or a tunnel on the box connects from 127.0.0.1 for
// every client it serves: with api_token set and no admin_token, a
// request it forwarded once shut the daemon down (and read the admin
// status, reloaded agents). Now a forwarded request is never local:
// admin routes without admin_token refuse it, and without api_token the
// whole API does; each refusal is logged.
func TestEdge_ForwardedIsNeverLocal(t *testing.T) {
	shut := make(chan struct{}, 64)
	var logs syncBuffer
	e := newAPIEnv(t, llmtest.Echo(), func(o *httpapi.Options) {
		o.APIToken = "api-token-5f0c2a9e41d7b3c8"
		o.AllowedHosts = []string{"agnx.example.org"}
		o.Shutdown = func() { shut <- struct{}{} }
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	addr := e.listen(httpapi.ConnLimits{})
	for _, h := range forwarded {
		resp := post(t, addr, "agnx.example.org", "/api/admin/v1/shutdown", "", h)
		requireRefused(t, resp, true, "set server.admin_token")
		requireRefused(t, get(t, addr, "agnx.example.org", "/api/admin/v1/status", h), true, "server.admin_token")
		requireRefused(t, post(t, addr, "agnx.example.org", "/api/admin/v1/reload-agents", "", h), true, "server.admin_token")
		// The API token still opens the API through the proxy.
		assert.Equal(t, http.StatusOK, get(t, addr, "agnx.example.org", "/api/v1/agents", h,
			"Authorization: Bearer api-token-5f0c2a9e41d7b3c8").StatusCode, h)
	}
	assert.Empty(t, shut, "nothing forwarded reached the shutdown")
	assert.Contains(t, logs.String(), `"reason":"not_local"`)
	assert.Contains(t, logs.String(), `"client":"127.0.0.1"`)
	assert.Contains(t, logs.String(), `"forwarded_header":"X-Forwarded-For"`)

	// A program on the box itself is still local.
	resp := get(t, addr, addr, "/api/admin/v1/status")
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, string(data), "api-token-5f0c2a9e41d7b3c8", "no answer carries a token")

	// Without api_token, the whole API refuses what a proxy forwarded.
	open := newAPIEnv(t, llmtest.Echo())
	openAddr := open.listen(httpapi.ConnLimits{})
	for _, h := range forwarded {
		requireRefused(t, get(t, openAddr, openAddr, "/api/v1/agents", h), false, "set server.api_token")
		requireRefused(t, post(t, openAddr, openAddr, "/api/v1/sessions", `{"agent":"assistant"}`, h, "Content-Type: application/json"),
			false, "a proxy forwarded")
	}
	assert.Equal(t, http.StatusOK, get(t, openAddr, openAddr, "/api/v1/agents").StatusCode)
	assert.Zero(t, sessionCount(t, open))
}

// Behind a trusted proxy, the client is the right-most forwarded address
// that is not a trusted proxy: its wrong tokens lock it out, not the
// address the client wrote on the left nor the proxy's other clients; and
// it is still not local.
func TestEdge_TrustedProxyThrottlesTheClient(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo(), func(o *httpapi.Options) {
		o.APIToken = "api-token-5f0c2a9e41d7b3c8"
		o.TrustedProxies = []string{"127.0.0.1"}
	})
	addr := e.listen(httpapi.ConnLimits{})
	good, bad := "Authorization: Bearer api-token-5f0c2a9e41d7b3c8", "Authorization: Bearer guess"
	spoofed := "X-Forwarded-For: 198.51.100.1, 203.0.113.9"
	for range 6 {
		requireRefused(t, get(t, addr, addr, "/api/v1/agents", spoofed, bad), false, "server.api_token")
	}
	resp := get(t, addr, addr, "/api/v1/agents", "X-Forwarded-For: 203.0.113.9", good)
	requireProblem(t, resp, http.StatusTooManyRequests, "too_many_requests")
	assert.Equal(t, http.StatusTooManyRequests, get(t, addr, addr, "/api/v1/agents", "X-Forwarded-For: 203.0.113.9, 127.0.0.1", good).StatusCode,
		"a second trusted hop changes nothing")
	assert.Equal(t, http.StatusOK, get(t, addr, addr, "/api/v1/agents", "X-Forwarded-For: 198.51.100.1", good).StatusCode,
		"what the client wrote on the left is not whom it is")
	assert.Equal(t, http.StatusOK, get(t, addr, addr, "/api/v1/agents", "X-Forwarded-For: 192.0.2.50", good).StatusCode,
		"the proxy's other clients are served")
	assert.Equal(t, http.StatusOK, get(t, addr, addr, "/api/v1/agents", good).StatusCode, "so are local programs")
	requireRefused(t, get(t, addr, addr, "/api/admin/v1/status", "X-Forwarded-For: 127.0.0.1"), true, "server.admin_token")
}

// The web page's cookie is named for its daemon (browsers send a host's
// cookies to all its ports), and over HTTPS behind a trusted proxy it
// takes the __Host- prefix, with Secure.
func TestWebUI_CookieNamePerInstance(t *testing.T) {
	e := webEnv(t, func(o *httpapi.Options) { o.TrustedProxies = []string{"127.0.0.1"} })
	resp := e.do("POST", "/ui/signin", `{"token":"api-secret"}`)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.True(t, strings.HasPrefix(resp.Header.Get("Set-Cookie"), webCookieName+"="), resp.Header.Get("Set-Cookie"))
	c := resp.Cookies()[0]
	requireRefused(t, e.do("GET", "/api/v1/agents", "", "Cookie: agnx_web="+c.Value), false, "server.api_token")
	assert.Equal(t, http.StatusOK, e.do("GET", "/api/v1/agents", "", "Cookie: "+webCookieName+"="+c.Value).StatusCode)

	other := webEnv(t, func(o *httpapi.Options) { o.InstanceID = "fedcba9876543210" })
	requireRefused(t, other.do("GET", "/api/v1/agents", "", "Cookie: "+webCookieName+"="+c.Value), false, "server.api_token")

	// Over HTTPS, as a trusted proxy says.
	https := "X-Forwarded-Proto: https"
	resp = e.do("POST", "/ui/signin", `{"token":"api-secret"}`, https)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	set := resp.Header.Get("Set-Cookie")
	assert.Regexp(t, `^__Host-`+webCookieName+`=[0-9]+\.[A-Za-z0-9_-]{43}; Path=/; Max-Age=2592000; HttpOnly; Secure; SameSite=Strict$`, set)
	hc := resp.Cookies()[0]
	assert.Equal(t, http.StatusOK, e.do("GET", "/api/v1/agents", "", https, "Cookie: __Host-"+webCookieName+"="+hc.Value).StatusCode)
	// A client that is not the trusted proxy cannot claim HTTPS.
	plain := webEnv(t)
	resp = plain.do("POST", "/ui/signin", `{"token":"api-secret"}`, https)
	assert.NotContains(t, resp.Header.Get("Set-Cookie"), "__Host-")

	// Signing in clears the cookie of the old name, which browsers would
	// go on sending to every service of the host.
	resp = e.do("POST", "/ui/signin", `{"token":"api-secret"}`, "Cookie: agnx_web=old")
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Contains(t, resp.Header.Values("Set-Cookie"), "agnx_web=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict")
}
