package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// listen serves e.api on a real listener of its own (net.Listen on
// 127.0.0.1:0 and an http.Server, limited by lim), as serve does, and
// returns its address ("127.0.0.1:PORT"). hook, when given, sees every
// connection state change after the limiter did.
func (e *apiEnv) listen(lim httpapi.ConnLimits, hook ...func(net.Conn, http.ConnState)) string {
	e.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(e.t, err)
	srv := &http.Server{Handler: e.api, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	ln = lim.Limit(srv, ln)
	if len(hook) > 0 {
		inner := srv.ConnState
		srv.ConnState = func(c net.Conn, st http.ConnState) { inner(c, st); hook[0](c, st) }
	}
	go func() { _ = srv.Serve(ln) }()
	e.t.Cleanup(func() { e.api.Close(); _ = srv.Close() })
	return ln.Addr().String()
}

// dial connects to addr from the loopback address from ("" for any), with
// a deadline that fails a test where the server would hang.
func dial(t testing.TB, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	t.Cleanup(func() { c.Close() })
	return c
}

// exchange writes a request on c and reads the response.
func exchange(t testing.TB, c net.Conn, br *bufio.Reader, lines ...string) *http.Response {
	t.Helper()
	_, err := io.WriteString(c, strings.Join(lines, "\r\n"))
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	return resp // closing c ends its body
}

// raw sends a request as written (CRLFs added) on a new connection and
// reads the response.
func raw(t testing.TB, addr string, lines ...string) *http.Response {
	t.Helper()
	c := dial(t, "", addr)
	return exchange(t, c, bufio.NewReader(c), lines...)
}

// post is a raw POST with a body and extra header lines.
func post(t testing.TB, addr, host, path, body string, headers ...string) *http.Response {
	t.Helper()
	lines := append([]string{"POST " + path + " HTTP/1.1", "Host: " + host,
		fmt.Sprintf("Content-Length: %d", len(body))}, headers...)
	return raw(t, addr, append(lines, "", body)...)
}

// get is a raw GET with extra header lines.
func get(t testing.TB, addr, host, path string, headers ...string) *http.Response {
	t.Helper()
	lines := append([]string{"GET " + path + " HTTP/1.1", "Host: " + host}, headers...)
	return raw(t, addr, append(lines, "", "")...)
}

func sessionCount(t testing.TB, e *apiEnv) int {
	t.Helper()
	list, err := runtime.ListSessions(e.st)
	require.NoError(t, err)
	return len(list)
}

// A web page in the user's browser cannot drive the daemon: not with a
// foreign Host (DNS rebinding), not from another origin, not with a body a
// form or a no-preflight fetch can send. Nothing it sends has an effect.
func TestEdge_RefusesWebPages(t *testing.T) {
	shut := make(chan struct{}, 8)
	e := newAPIEnv(t, llmtest.Echo(), func(o *httpapi.Options) { o.Shutdown = func() { shut <- struct{}{} } })
	sid := e.session()
	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"my secret plans"}`, http.StatusOK, nil)
	addr := e.listen(httpapi.ConnLimits{})
	_, port, _ := net.SplitHostPort(addr)
	evil := "evil.example:" + port
	json := "Content-Type: application/json"
	before := sessionCount(t, e)

	misdirected := []*http.Response{
		get(t, addr, evil, "/api/v1/sessions/"+sid+"/messages"),
		get(t, addr, evil, "/api/v1/sessions"),
		get(t, addr, evil, "/livez"),
		post(t, addr, evil, "/api/admin/v1/shutdown", ""),
		post(t, addr, evil, "/api/v1/sessions", `{"agent":"assistant"}`, json),
		post(t, addr, "127.0.0.1.evil.example", "/api/v1/sessions", `{"agent":"assistant"}`, json),
	}
	for _, resp := range misdirected {
		p := requireProblem(t, resp, http.StatusMisdirectedRequest, "misdirected_request")
		assert.Contains(t, p.Detail, "server.allowed_hosts")
		assert.NotContains(t, p.Detail, "secret plans")
	}

	host := addr
	foreign := []*http.Response{
		post(t, addr, host, "/api/admin/v1/shutdown", "", "Origin: http://evil.example"),
		post(t, addr, host, "/api/admin/v1/shutdown", "x", "Origin: http://evil.example", "Content-Type: text/plain"),
		post(t, addr, host, "/api/v1/sessions", `{"agent":"assistant"}`, "Origin: http://evil.example", json),
		post(t, addr, host, "/api/v1/sessions", `{"agent":"assistant"}`, "Origin: null", json),
		post(t, addr, host, "/api/v1/sessions", `{"agent":"assistant"}`, "Origin: http://localhost:3000", json),
		post(t, addr, host, "/api/v1/sessions", `{"agent":"assistant"}`, "Origin: http://127.0.0.1", json),
		get(t, addr, host, "/api/v1/sessions/"+sid+"/messages", "Origin: http://evil.example"),
		raw(t, addr, "OPTIONS /api/v1/sessions HTTP/1.1", "Host: "+host, "Origin: http://evil.example",
			"Access-Control-Request-Method: POST", "", ""),
	}
	for _, resp := range foreign {
		p := requireProblem(t, resp, http.StatusForbidden, "origin_not_allowed")
		assert.Contains(t, p.Detail, "server.allowed_origins")
		assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	for _, resp := range []*http.Response{
		get(t, addr, host, "/api/v1/sessions/"+sid+"/messages", "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: no-cors"),
		get(t, addr, host, "/api/v1/sessions", "Sec-Fetch-Site: same-site", "Sec-Fetch-Mode: cors"),
		post(t, addr, host, "/api/admin/v1/shutdown", "", "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: navigate"),
	} {
		requireProblem(t, resp, http.StatusForbidden, "origin_not_allowed")
	}

	for _, resp := range []*http.Response{
		post(t, addr, host, "/api/v1/sessions", `{"agent":"assistant"}`, "Content-Type: text/plain"),
		post(t, addr, host, "/api/v1/sessions", `{"agent":"assistant"}`, "Content-Type: text/plain; charset=utf-8"),
		post(t, addr, host, "/api/v1/sessions", `{"agent":"assistant"}`),
		post(t, addr, host, "/api/v1/sessions", "agent=assistant", "Content-Type: application/x-www-form-urlencoded"),
		post(t, addr, host, "/api/v1/sessions", "--b\r\n\r\n--b--", "Content-Type: multipart/form-data; boundary=b"),
		post(t, addr, host, "/api/v1/sessions", `{"agent":"assistant"}`, "Content-Type: application/json; charset=latin1"),
		post(t, addr, host, "/api/admin/v1/shutdown", "", "Content-Type: application/x-www-form-urlencoded"),
		post(t, addr, host, "/api/admin/v1/shutdown", "", "Content-Type: text/plain"),
		post(t, addr, host, "/api/v1/sessions/"+sid+"/messages", `{"content":"hi"}`, "Content-Type: text/plain"),
	} {
		p := requireProblem(t, resp, http.StatusUnsupportedMediaType, "unsupported_media_type")
		assert.Contains(t, p.Detail, "application/json")
	}

	assert.Equal(t, before, sessionCount(t, e), "no refused request created a session")
	var msgs struct{ Messages []messageOut }
	e.call("GET", "/api/v1/sessions/"+sid+"/messages", "", http.StatusOK, &msgs)
	assert.Len(t, msgs.Messages, 2, "no refused request ran a turn")
	assert.Empty(t, shut, "no refused request shut the daemon down")
}

type messageOut struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// What the CLI, curl, the parent project's client and the server's own
// pages send keeps working: loopback names with any port (tunnels), the
// address the connection came on, configured names, JSON with or without
// charset, no Origin or the server's own, and a configured origin with a
// CORS preflight.
func TestEdge_AllowsClients(t *testing.T) {
	shut := make(chan struct{}, 1)
	e := newAPIEnv(t, llmtest.Echo(), func(o *httpapi.Options) {
		o.Shutdown = func() { shut <- struct{}{} }
		o.AllowedHosts = []string{"Pi.Local"}
		o.AllowedOrigins = []string{"https://app.example/"}
	})
	addr := e.listen(httpapi.ConnLimits{})
	_, port, _ := net.SplitHostPort(addr)
	body := `{"agent":"assistant"}`
	json := "Content-Type: application/json"
	for _, host := range []string{addr, "localhost:" + port, "LOCALHOST", "localhost.:9999", "[::1]:" + port,
		"127.0.0.2:7000", "0.0.0.0:" + port, "pi.local:" + port, "pi.local"} {
		resp := post(t, addr, host, "/api/v1/sessions", body, json)
		assert.Equal(t, http.StatusCreated, resp.StatusCode, "Host: %s", host)
	}
	for _, h := range [][]string{
		{"Content-Type: application/json; charset=utf-8"},
		{"Content-Type: Application/JSON; charset=UTF-8"},
		{json, "Origin: http://" + addr},                // the server's own page
		{json, "Origin: http://localhost:" + port},      // the same, by another name
		{json, "Origin: https://app.example"},           // configured
		{json, "Sec-Fetch-Site: same-origin"},           // a same-origin GET-less fetch
		{json, "Sec-Fetch-Site: none"},                  // typed in the address bar
		{json, "User-Agent: curl/8.5.0", "Accept: */*"}, // curl -H 'Content-Type: application/json'
	} {
		host := addr
		if strings.Contains(h[len(h)-1], "localhost") {
			host = "localhost:" + port
		}
		resp := post(t, addr, host, "/api/v1/sessions", body, h...)
		assert.Equal(t, http.StatusCreated, resp.StatusCode, "%v", h)
		if strings.Contains(strings.Join(h, " "), "app.example") {
			assert.Equal(t, "https://app.example", resp.Header.Get("Access-Control-Allow-Origin"))
			assert.Contains(t, resp.Header.Get("Access-Control-Expose-Headers"), "Location")
		} else {
			assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), "no CORS for same-origin or non-browser clients")
		}
	}
	// A link clicked on another site opens the page: navigations are not
	// cross-site fetches. GETs and bodiless POSTs need no Content-Type.
	assert.Equal(t, http.StatusOK, get(t, addr, addr, "/livez", "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: navigate").StatusCode)
	assert.Equal(t, http.StatusOK, get(t, addr, addr, "/livez", "Content-Type: text/plain").StatusCode)

	pre := raw(t, addr, "OPTIONS /api/v1/sessions HTTP/1.1", "Host: "+addr, "Origin: https://app.example",
		"Access-Control-Request-Method: POST", "Access-Control-Request-Headers: authorization, content-type", "", "")
	assert.Equal(t, http.StatusNoContent, pre.StatusCode)
	assert.Equal(t, "https://app.example", pre.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, pre.Header.Get("Access-Control-Allow-Methods"), "POST")
	assert.Contains(t, pre.Header.Get("Access-Control-Allow-Headers"), "Content-Type")
	assert.Contains(t, pre.Header.Get("Access-Control-Allow-Headers"), "Authorization")
	assert.Contains(t, pre.Header.Values("Vary"), "Origin")

	// The CLI's client over the same listener: it sends the URL's Host and
	// Content-Type: application/json with every body.
	c := httpapi.NewClient("http://"+addr, httpapi.ClientOptions{})
	ctx := context.Background()
	info, err := c.CreateSession(ctx, "assistant")
	require.NoError(t, err)
	reply, err := c.Send(ctx, info.ID, "hello")
	require.NoError(t, err)
	assert.Contains(t, reply.Content, "hello")
	require.NoError(t, c.Stream(ctx, info.ID, "again", func(runtime.Event) error { return nil }))
	require.NoError(t, c.Shutdown(ctx))
	<-shut
}

// The client sends Content-Type: application/json with every body: a
// server that refuses other bodies (415) serves all its calls.
func TestClient_DeclaresJSONBodies(t *testing.T) {
	bodies := make(chan string, 32)
	srv := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if len(b) > 0 {
			bodies <- r.Method + " " + r.URL.Path + ": " + r.Header.Get("Content-Type")
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	c := httpapi.NewClient("http://"+ln.Addr().String(), httpapi.ClientOptions{})
	ctx := context.Background()
	_, _ = c.CreateSession(ctx, "a")
	_, _ = c.Send(ctx, "s", "x")
	_ = c.Stream(ctx, "s", "x", func(runtime.Event) error { return nil })
	_, _ = c.Approve(ctx, "s", "c", "deny")
	_, _ = c.Cancel(ctx, "s")
	_ = c.Shutdown(ctx)
	_, _ = c.ReloadAgents(ctx)
	close(bodies)
	n := 0
	for b := range bodies {
		n++
		assert.True(t, strings.HasSuffix(b, ": application/json"), b)
	}
	assert.GreaterOrEqual(t, n, 4, "the calls with a body were seen")
}
