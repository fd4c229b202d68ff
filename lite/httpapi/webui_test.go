package httpapi_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/lite/webui"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

var uiFS = fstest.MapFS{
	"index.html": {Data: []byte("<!doctype html><title>agnx-lite</title>" + strings.Repeat("<p>page</p>", 100))},
	"app.js":     {Data: []byte(strings.Repeat("export const x = 1;\n", 50))},
	"app.css":    {Data: []byte("body{margin:0}")},
}

// cookieValue signs a cookie as the contract has it, independently of the
// server's code: "<expiry>.<base64url HMAC-SHA256(token, "agnx-lite web <expiry>")>".
func cookieValue(token string, expiry int64) string {
	exp := strconv.FormatInt(expiry, 10)
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("agnx-lite web " + exp))
	return exp + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// webCookieName is the sign-in cookie's name of webEnv's daemon.
const webCookieName = "agnx_web_0123456789abcdef"

func webEnv(t *testing.T, tweak ...func(*httpapi.Options)) *apiEnv {
	return newAPIEnv(t, llmtest.Echo(), append([]func(*httpapi.Options){func(o *httpapi.Options) {
		o.UI = webui.New(uiFS)
		o.APIToken, o.AdminToken = "api-secret", "admin-secret"
		o.InstanceID = "0123456789abcdef"
	}}, tweak...)...)
}

// signIn posts the token and returns the sign-in cookie set.
func (e *apiEnv) signIn(token string) *http.Cookie {
	e.t.Helper()
	resp := e.do("POST", "/ui/signin", `{"token":"`+token+`"}`)
	require.Equal(e.t, http.StatusNoContent, resp.StatusCode)
	for _, c := range resp.Cookies() {
		if c.Name == webCookieName {
			return c
		}
	}
	return nil
}

func TestWebUI_Assets(t *testing.T) {
	e := webEnv(t)
	for _, path := range []string{"/", "/ui/app.js"} {
		resp := e.do("GET", path, "", "Accept-Encoding: gzip")
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		h := resp.Header
		assert.Equal(t, webui.CSP, h.Get("Content-Security-Policy"), path)
		assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
		assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
		assert.Equal(t, "DENY", h.Get("X-Frame-Options"))
		assert.Equal(t, "no-cache", h.Get("Cache-Control"))
		assert.Equal(t, "gzip", h.Get("Content-Encoding"), path)
		tag := h.Get("ETag")
		require.NotEmpty(t, tag)
		again := e.do("GET", path, "", "Accept-Encoding: gzip", "If-None-Match: "+tag)
		assert.Equal(t, http.StatusNotModified, again.StatusCode, path)
	}
	resp := e.do("GET", "/", "")
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, string(uiFS["index.html"].Data), string(data))
	assert.Equal(t, http.StatusOK, e.do("HEAD", "/ui/app.js", "").StatusCode)
	css := e.do("GET", "/ui/app.css", "", "Accept-Encoding: gzip")
	assert.Equal(t, "text/css; charset=utf-8", css.Header.Get("Content-Type"))
	assert.Empty(t, css.Header.Get("Content-Encoding"), "gzip would not make it smaller")
	assert.Equal(t, webui.CSP, css.Header.Get("Content-Security-Policy"))

	missing := e.do("GET", "/ui/nope.js", "")
	assert.Equal(t, webui.CSP, missing.Header.Get("Content-Security-Policy"), "the UI's 404 carries its CSP")
	requireProblem(t, missing, http.StatusNotFound, "not_found")
	requireProblem(t, e.do("GET", "/ui/", ""), http.StatusNotFound, "not_found")
	requireProblem(t, e.do("GET", "/nope", ""), http.StatusNotFound, "not_found")
	requireProblem(t, e.do("POST", "/", ""), http.StatusMethodNotAllowed, "method_not_allowed")

	// The edge applies to the page: a rebound name, another site's script.
	rebound := httptest.NewRequest("GET", "http://evil.example/", nil)
	rebound.RemoteAddr = "127.0.0.1:1"
	rec := httptest.NewRecorder()
	e.api.ServeHTTP(rec, rebound)
	requireProblem(t, rec.Result(), http.StatusMisdirectedRequest, "misdirected_request")
	requireProblem(t, e.do("GET", "/ui/app.js", "", "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: no-cors"),
		http.StatusForbidden, "origin_not_allowed")
	assert.Equal(t, http.StatusOK, e.do("GET", "/", "", "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: navigate").StatusCode,
		"a link to the UI from elsewhere opens it")

	noUI := newAPIEnv(t, llmtest.Echo())
	p := requireProblem(t, noUI.do("GET", "/", ""), http.StatusNotFound, "not_found")
	assert.Contains(t, p.Detail, "no web UI")
}

func TestWebUI_SignIn(t *testing.T) {
	e := webEnv(t)
	resp := e.do("POST", "/ui/signin", `{"token":"api-secret"}`)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	set := resp.Header.Get("Set-Cookie")
	assert.Regexp(t, `^`+webCookieName+`=[0-9]+\.[A-Za-z0-9_-]{43}; Path=/; Max-Age=2592000; HttpOnly; SameSite=Strict$`, set)
	assert.NotContains(t, set, "api-secret", "the cookie is not the token")
	c := resp.Cookies()[0]
	exp, err := strconv.ParseInt(strings.Split(c.Value, ".")[0], 10, 64)
	require.NoError(t, err)
	assert.InDelta(t, time.Now().Add(30*24*time.Hour).Unix(), exp, 5)
	assert.Equal(t, cookieValue("api-secret", exp), c.Value, "signed as the contract says")

	cookie := "Cookie: " + webCookieName + "=" + c.Value
	requireRefused(t, e.do("GET", "/api/v1/agents", ""), false, "server.api_token")
	assert.Equal(t, http.StatusOK, e.do("GET", "/api/v1/agents", "", cookie).StatusCode, "the cookie alone opens the API")
	assert.Equal(t, http.StatusOK, e.do("GET", "/api/v1/sessions", "", cookie).StatusCode)
	// Among others, and next to a wrong bearer token.
	assert.Equal(t, http.StatusOK, e.do("GET", "/api/v1/agents", "", "Cookie: a=b; "+webCookieName+"=junk; "+webCookieName+"="+c.Value).StatusCode)
	assert.Equal(t, http.StatusOK, e.do("GET", "/api/v1/agents", "", cookie, "Authorization: Bearer nope").StatusCode)

	// Never the admin routes, the OpenAI endpoint or the hooks.
	requireRefused(t, e.do("GET", "/api/admin/v1/status", "", cookie), true, "server.admin_token")
	assert.Equal(t, http.StatusUnauthorized, e.do("GET", "/v1/models", "", cookie).StatusCode)
	assert.Equal(t, http.StatusUnauthorized, e.do("POST", "/api/v1/hooks/x", `{}`, cookie).StatusCode)

	// Over TLS the cookie is Secure.
	req := httptest.NewRequest("POST", "https://127.0.0.1:8080/ui/signin", strings.NewReader(`{"token":"api-secret"}`))
	req.RemoteAddr = "127.0.0.1:1"
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.api.ServeHTTP(rec, req)
	require.Equal(t, http.StatusNoContent, rec.Code)
	assert.Contains(t, rec.Header().Get("Set-Cookie"), "; Secure")
}

func TestWebUI_SignInRefused(t *testing.T) {
	e := webEnv(t)
	p := requireProblem(t, e.do("POST", "/ui/signin", `{"token":"nope"}`), http.StatusUnauthorized, "unauthorized")
	assert.Contains(t, p.Detail, "server.api_token")
	assert.Equal(t, 1, strings.Count(strings.TrimSuffix(p.Detail, "."), ". ")+1, "one sentence")
	resp := e.do("POST", "/ui/signin", `{"token":"admin-secret"}`)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the admin token is not the API token")
	assert.Empty(t, resp.Cookies())

	// A page of another site cannot sign the browser in or out: the
	// edge's Origin check, and forms cannot send JSON.
	requireProblem(t, e.do("POST", "/ui/signin", `{"token":"api-secret"}`, "Origin: https://evil.example"),
		http.StatusForbidden, "origin_not_allowed")
	requireProblem(t, e.do("POST", "/ui/signout", "", "Origin: https://evil.example"), http.StatusForbidden, "origin_not_allowed")
	requireProblem(t, e.do("POST", "/ui/signin", `token=api-secret`, "Content-Type: application/x-www-form-urlencoded"),
		http.StatusUnsupportedMediaType, "unsupported_media_type")
	requireProblem(t, e.do("POST", "/ui/signin", `{"token":`), http.StatusBadRequest, "invalid_request")
	// The page's own origin is fine.
	resp = e.do("POST", "/ui/signin", `{"token":"api-secret"}`, "Origin: "+e.srv.URL)
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
}

func TestWebUI_BadCookies(t *testing.T) {
	e := webEnv(t)
	now := time.Now().Unix()
	good := cookieValue("api-secret", now+3600)
	exp, mac, _ := strings.Cut(good, ".")
	flipped := []byte(mac)
	flipped[5] ^= 1
	for name, v := range map[string]string{
		"expired":        cookieValue("api-secret", now-1),
		"too far ahead":  cookieValue("api-secret", now+60*24*3600),
		"other key":      cookieValue("other", now+3600),
		"admin key":      cookieValue("admin-secret", now+3600),
		"tampered mac":   exp + "." + string(flipped),
		"moved expiry":   strconv.FormatInt(now+7200, 10) + "." + mac,
		"leading zero":   "0" + good,
		"padded mac":     good + "=",
		"no mac":         exp + ".",
		"no dot":         exp + mac,
		"the token":      "api-secret",
		"empty":          "",
		"huge":           strings.Repeat("9", 30) + "." + mac,
		"negative":       cookieValue("api-secret", -5),
		"short mac":      exp + "." + mac[:20],
		"standard b64":   exp + "." + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 32))),
		"two dots":       good + ".x",
		"unicode expiry": "１２３." + mac,
	} {
		t.Run(name, func(t *testing.T) {
			requireRefused(t, e.do("GET", "/api/v1/agents", "", "Cookie: "+webCookieName+"="+v), false, "server.api_token")
		})
	}
	assert.Equal(t, http.StatusOK, e.do("GET", "/api/v1/agents", "", "Cookie: "+webCookieName+"="+good).StatusCode)
}

// TestWebUI_TokenChange: a new token signs every browser out.
func TestWebUI_TokenChange(t *testing.T) {
	e := webEnv(t)
	c := e.signIn("api-secret")
	require.NotNil(t, c)
	changed := httpapi.New(httpapi.Options{Loop: e.loop, Agents: e.opts.Agents, APIToken: "new-secret", UI: webui.New(uiFS)})
	req := httptest.NewRequest("GET", "/api/v1/agents", nil)
	req.RemoteAddr, req.Host = "127.0.0.1:1", "127.0.0.1:8080"
	req.AddCookie(c)
	rec := httptest.NewRecorder()
	changed.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
}

func TestWebUI_SignOut(t *testing.T) {
	e := webEnv(t)
	resp := e.do("POST", "/ui/signout", "")
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, webCookieName+"=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict", resp.Header.Get("Set-Cookie"))
}

// TestWebUI_NoToken: without an API token, a loopback browser needs no
// sign-in; sign-in answers 204 and sets nothing.
func TestWebUI_NoToken(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo(), func(o *httpapi.Options) { o.UI = webui.New(uiFS) })
	resp := e.do("POST", "/ui/signin", `{"token":"anything"}`)
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Set-Cookie"))
	for _, path := range []string{"/", "/ui/app.js", "/api/v1/agents", "/api/v1/sessions", "/api/v1/health"} {
		assert.Equal(t, http.StatusOK, e.do("GET", path, "").StatusCode, path)
	}
	// Others are still refused, cookie or not.
	requireRefused(t, serveAs(e.api, "192.0.2.7:1", "GET", "/api/v1/agents", ""), false, "loopback clients only")
}

// TestWebUI_NoStore: nothing the API answers is kept by a browser or a
// proxy, refusals and errors included; the page's files are revalidated.
func TestWebUI_NoStore(t *testing.T) {
	e := webEnv(t)
	auth := "Authorization: Bearer api-secret"
	for _, path := range []string{"/api/v1/agents", "/api/v1/sessions", "/api/v1/health", "/api/v1/sessions/nope",
		"/api/v1/nope", "/v1/models", "/api/admin/v1/status"} {
		for _, h := range [][]string{nil, {auth}} {
			resp := e.do("GET", path, "", h...)
			assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"), "%s %v", path, h)
		}
	}
	sid := e.session2(auth)
	assert.Equal(t, "no-store", e.do("GET", "/api/v1/sessions/"+sid+"/messages", "", auth).Header.Get("Cache-Control"))
	assert.Equal(t, "no-cache", e.do("GET", "/", "").Header.Get("Cache-Control"))
}

func TestWebUI_Health(t *testing.T) {
	var asked int
	e := webEnv(t, func(o *httpapi.Options) {
		o.RSS = func() int64 { return 15_000_000 }
		o.Health = func(ctx context.Context) httpapi.HealthFacts {
			asked++
			return httpapi.HealthFacts{AgentsLoaded: 1, Checks: []httpapi.HealthCheck{
				{Name: "ollama http://x", Status: "fail", Detail: "not reachable", Fix: "start it"},
				{Name: "memory", Status: "ok", Detail: "plenty"},
			}}
		}
	})
	requireRefused(t, e.do("GET", "/api/v1/health", ""), false, "server.api_token")
	c := e.signIn("api-secret")
	var h struct {
		Version       string `json:"version"`
		UptimeSeconds *int64 `json:"uptime_seconds"`
		RSSBytes      int64  `json:"rss_bytes"`
		AgentsLoaded  int    `json:"agents_loaded"`
		AgentsDefined int    `json:"agents_defined"`
		Checks        []struct {
			Name, Status, Detail, Fix string
		} `json:"checks"`
	}
	e.call("GET", "/api/v1/health", "", http.StatusOK, &h, "Cookie: "+webCookieName+"="+c.Value)
	assert.Equal(t, "v-test", h.Version)
	require.NotNil(t, h.UptimeSeconds)
	assert.GreaterOrEqual(t, *h.UptimeSeconds, int64(0))
	assert.Equal(t, int64(15_000_000), h.RSSBytes)
	assert.Equal(t, 1, h.AgentsLoaded)
	assert.Equal(t, 1, h.AgentsDefined)
	require.Len(t, h.Checks, 2)
	assert.Equal(t, "fail", h.Checks[0].Status)
	assert.Equal(t, "start it", h.Checks[0].Fix)
	assert.Equal(t, 1, asked)

	// Without a health source, the report still has its shape.
	bare := newAPIEnv(t, llmtest.Echo())
	var raw map[string]any
	bare.call("GET", "/api/v1/health", "", http.StatusOK, &raw)
	for _, k := range []string{"version", "uptime_seconds", "rss_bytes", "agents_loaded", "agents_defined", "checks"} {
		assert.Contains(t, raw, k)
	}
	assert.Equal(t, []any{}, raw["checks"])
}
