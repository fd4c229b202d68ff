package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/lite/webui"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// routeURL turns a route pattern into a method and a path to call.
func routeURL(pattern, sid string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = strings.ReplaceAll(path, "{id}", sid)
	path = strings.ReplaceAll(path, "{name}", "assistant")
	path = strings.ReplaceAll(path, "{file}", "app.js")
	return method, path
}

func TestAuth_Tokens(t *testing.T) {
	shut := make(chan struct{}, 1)
	e := newAPIEnv(t, llmtest.Echo(), func(o *httpapi.Options) {
		o.APIToken, o.AdminToken = "api-secret", "admin-secret"
		o.Shutdown = func() { shut <- struct{}{} }
		o.UI = webui.New(uiFS)
	})
	sid := e.session2("Authorization: Bearer api-secret")
	for _, rt := range httpapi.Routes() {
		method, path := routeURL(rt, sid)
		t.Run(rt, func(t *testing.T) {
			public := !strings.HasPrefix(path, "/api/") && path != "/metrics" // metrics take the API token
			adminRoute := strings.HasPrefix(path, "/api/admin/")
			if strings.HasPrefix(path, "/api/v1/hooks/") {
				// A hook has its own secret: the API token neither is
				// asked for nor opens it (hooks_test.go).
				for _, h := range [][]string{nil, {"Authorization: Bearer api-secret"}} {
					resp := e.do(method, path, "", h...)
					assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
					data, _ := io.ReadAll(resp.Body)
					assert.Contains(t, string(data), "X-Hub-Signature-256", "the hook's refusal, not the API's")
				}
				return
			}
			if strings.HasPrefix(path, "/v1/") {
				// The OpenAI endpoint takes the API token and refuses in
				// OpenAI's shape (openai_test.go).
				for _, h := range []string{"", "Authorization: Bearer nope", "Authorization: Bearer admin-secret"} {
					var hs []string
					if h != "" {
						hs = append(hs, h)
					}
					resp := e.do(method, path, "", hs...)
					var body struct{ Error struct{ Code string } }
					require.NoError(t, jsonDecode(resp, &body))
					assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
					assert.Equal(t, "invalid_api_key", body.Error.Code)
					assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "<server.api_token>")
				}
				assert.NotEqual(t, http.StatusUnauthorized, e.do(method, path, "", "Authorization: Bearer api-secret").StatusCode)
				return
			}
			if public {
				body := ""
				if path == "/ui/signin" {
					body = `{"token":"api-secret"}`
				}
				resp := e.do(method, path, body)
				assert.Less(t, resp.StatusCode, 400, "public routes need no token")
				return
			}
			wrong := []string{"", "Authorization: Bearer nope", "Authorization: api-secret", "Authorization: Basic YTpi"}
			if adminRoute {
				wrong = append(wrong, "Authorization: Bearer api-secret")
			} else {
				wrong = append(wrong, "Authorization: Bearer admin-secret")
			}
			for _, h := range wrong {
				var hs []string
				if h != "" {
					hs = append(hs, h)
				}
				hint := "<server.api_token>"
				if adminRoute {
					hint = "<server.admin_token>"
				}
				requireRefused(t, e.do(method, path, "", hs...), adminRoute, hint)
			}
			good := "Authorization: Bearer api-secret"
			if adminRoute {
				good = "Authorization: Bearer admin-secret"
			}
			resp := e.do(method, path, "", good)
			assert.NotEqual(t, http.StatusUnauthorized, resp.StatusCode)
			assert.NotEqual(t, http.StatusForbidden, resp.StatusCode)
		})
	}
	<-shut
}

// session2 creates a session, sending headers.
func (e *apiEnv) session2(headers ...string) string {
	e.t.Helper()
	var s struct {
		ID string `json:"session_id"`
	}
	e.call("POST", "/api/v1/sessions", `{"agent":"assistant"}`, http.StatusCreated, &s, headers...)
	return s.ID
}

// serveAs calls the handler directly with a remote address.
func serveAs(h http.Handler, remote, method, path, auth string) *http.Response {
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr, req.Host = remote, "127.0.0.1:8080"
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestAuth_LoopbackRule(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	const remote = "192.0.2.7:40000"
	for _, path := range []string{"/api/v1/agents", "/api/v1/sessions", "/api/admin/v1/status"} {
		admin := strings.HasPrefix(path, "/api/admin/")
		hint := "loopback clients only: set server.api_token"
		if admin {
			hint = "loopback clients only: set server.admin_token"
		}
		requireRefused(t, serveAs(e.api, remote, "GET", path, ""), admin, hint)
		assert.Equal(t, http.StatusOK, serveAs(e.api, "127.0.0.1:40000", "GET", path, "").StatusCode)
		assert.Equal(t, http.StatusOK, serveAs(e.api, "[::1]:40000", "GET", path, "").StatusCode)
	}
	for _, path := range []string{"/livez", "/readyz", "/version", "/.well-known/agent-card.json"} {
		assert.Equal(t, http.StatusOK, serveAs(e.api, remote, "GET", path, "").StatusCode, path)
	}

	// With an API token, anyone holding it is served on /api/v1; the
	// admin routes, with no admin token, stay loopback only (the tokens
	// are independent, as in Agnx).
	withAPI := httpapi.New(httpapi.Options{Loop: e.loop, Agents: e.opts.Agents, APIToken: "t1"})
	assert.Equal(t, http.StatusOK, serveAs(withAPI, remote, "GET", "/api/v1/agents", "Bearer t1").StatusCode)
	requireRefused(t, serveAs(withAPI, remote, "GET", "/api/admin/v1/status", "Bearer t1"), true, "server.admin_token")
	assert.Equal(t, http.StatusOK, serveAs(withAPI, "127.0.0.1:1", "GET", "/api/admin/v1/status", "").StatusCode)
	requireRefused(t, serveAs(withAPI, "127.0.0.1:1", "GET", "/api/v1/agents", ""), false, "server.api_token")

	// An admin token alone guards the admin routes only.
	withAdmin := httpapi.New(httpapi.Options{Loop: e.loop, Agents: e.opts.Agents, AdminToken: "a1"})
	assert.Equal(t, http.StatusOK, serveAs(withAdmin, "127.0.0.1:1", "GET", "/api/v1/agents", "").StatusCode)
	requireRefused(t, serveAs(withAdmin, "127.0.0.1:1", "GET", "/api/admin/v1/status", ""), true, "server.admin_token")
	assert.Equal(t, http.StatusOK, serveAs(withAdmin, remote, "GET", "/api/admin/v1/status", "Bearer a1").StatusCode)
	requireRefused(t, serveAs(withAdmin, remote, "GET", "/api/v1/agents", ""), false, "server.api_token")
}

func TestInput_Bodies(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	msgs := "/api/v1/sessions/" + sid + "/messages"
	for _, tc := range []struct {
		name, path, body string
		status           int    // 400: not JSON; 422: JSON of the wrong shape
		detail           string // a part of the problem's detail
	}{
		{"empty body", msgs, "", 400, "empty"},
		{"truncated", msgs, `{"content":`, 400, "middle"},
		{"not JSON", msgs, `{content: hi}`, 400, "not valid JSON"},
		{"two values", msgs, `{"content":"a"} {"content":"b"}`, 400, "one"},
		{"wrong type", msgs, `{"content":5}`, 422, `"content"`},
		{"wrong type nested", "/api/v1/sessions", `{"agent":["a"]}`, 422, `"agent"`},
		{"array", msgs, `["hi"]`, 422, "object"},
		{"no agent", "/api/v1/sessions", `{"model":"x"}`, 422, `"agent"`},
		{"empty content", msgs, `{"content":""}`, 422, `"content"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := requireProblem(t, e.do("POST", tc.path, tc.body), tc.status, "invalid_request")
			assert.Contains(t, p.Detail, tc.detail)
		})
	}
	assert.Empty(t, e.fake.Requests(), "no bad request reached the model")
}

// TestInput_UnknownFieldsIgnored: as in Agnx, a field the route does not
// know is no error.
func TestInput_UnknownFieldsIgnored(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	var s struct {
		ID string `json:"session_id"`
	}
	e.call("POST", "/api/v1/sessions", `{"agent":"assistant","model":"x","extra":{"a":[1]}}`, http.StatusCreated, &s)
	var ans struct{ Content string }
	e.call("POST", "/api/v1/sessions/"+s.ID+"/messages", `{"content":"hi","colour":"red"}`, http.StatusOK, &ans)
	assert.Equal(t, "echo: hi", ans.Content)
}

func TestInput_BodyLimit(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	big := `{"content":"` + strings.Repeat("a", 2<<20) + `"}`
	for _, path := range []string{"/api/v1/sessions/" + sid + "/messages", "/api/v1/sessions/" + sid + "/stream", "/api/v1/sessions"} {
		req := httptest.NewRequest("POST", path, strings.NewReader(big))
		req.RemoteAddr, req.Host = "127.0.0.1:1", "127.0.0.1:8080"
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		e.api.ServeHTTP(rec, req)
		p := requireProblem(t, rec.Result(), http.StatusRequestEntityTooLarge, "payload_too_large")
		assert.Contains(t, p.Detail, "2097152")
	}
	// Over the wire too: the client gets the problem, not a reset.
	resp := e.do("POST", "/api/v1/sessions/"+sid+"/messages", big)
	requireProblem(t, resp, http.StatusRequestEntityTooLarge, "payload_too_large")
	// Just under the limit is fine.
	ok := `{"content":"` + strings.Repeat("b", 2<<20-20) + `"}`
	var ans struct{ Status string }
	e.call("POST", "/api/v1/sessions/"+sid+"/messages", ok, http.StatusOK, &ans)
	require.Equal(t, "completed", ans.Status)
}
