package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// routeURL turns a route pattern into a method and a path to call.
func routeURL(pattern, sid string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = strings.ReplaceAll(path, "{id}", sid)
	path = strings.ReplaceAll(path, "{name}", "assistant")
	return method, path
}

func TestAuth_Tokens(t *testing.T) {
	shut := make(chan struct{}, 1)
	e := newAPIEnv(t, llmtest.Echo(), func(o *httpapi.Options) {
		o.APIToken, o.AdminToken = "api-secret", "admin-secret"
		o.Shutdown = func() { shut <- struct{}{} }
	})
	sid := e.session2("Authorization: Bearer api-secret")
	for _, rt := range httpapi.Routes() {
		method, path := routeURL(rt, sid)
		t.Run(rt, func(t *testing.T) {
			public := !strings.HasPrefix(path, "/api/") && path != "/metrics" // metrics take the API token
			adminRoute := strings.HasPrefix(path, "/api/admin/")
			if public {
				resp := e.do(method, path, "")
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
				resp := e.do(method, path, "", hs...)
				assert.Equal(t, `Bearer realm="agnx-lite"`, resp.Header.Get("WWW-Authenticate"))
				p := requireProblem(t, resp, http.StatusUnauthorized, "unauthorized")
				if adminRoute {
					assert.Contains(t, p.Detail, "admin_token")
				} else {
					assert.Contains(t, p.Detail, "api_token")
				}
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
		p := requireProblem(t, serveAs(e.api, remote, "GET", path, ""), http.StatusForbidden, "forbidden")
		assert.Contains(t, p.Detail, "server.api_token")
		assert.Equal(t, http.StatusOK, serveAs(e.api, "127.0.0.1:40000", "GET", path, "").StatusCode)
		assert.Equal(t, http.StatusOK, serveAs(e.api, "[::1]:40000", "GET", path, "").StatusCode)
	}
	for _, path := range []string{"/livez", "/readyz", "/version", "/.well-known/agent-card.json"} {
		assert.Equal(t, http.StatusOK, serveAs(e.api, remote, "GET", path, "").StatusCode, path)
	}

	// With an API token, anyone holding it is served; admin routes take
	// the API token while no admin token is set.
	withAPI := httpapi.New(httpapi.Options{Loop: e.loop, Agents: e.opts.Agents, APIToken: "t1"})
	assert.Equal(t, http.StatusOK, serveAs(withAPI, remote, "GET", "/api/v1/agents", "Bearer t1").StatusCode)
	assert.Equal(t, http.StatusOK, serveAs(withAPI, remote, "GET", "/api/admin/v1/status", "Bearer t1").StatusCode)
	requireProblem(t, serveAs(withAPI, "127.0.0.1:1", "GET", "/api/v1/agents", ""), http.StatusUnauthorized, "unauthorized")

	// An admin token alone guards the admin routes only.
	withAdmin := httpapi.New(httpapi.Options{Loop: e.loop, Agents: e.opts.Agents, AdminToken: "a1"})
	assert.Equal(t, http.StatusOK, serveAs(withAdmin, "127.0.0.1:1", "GET", "/api/v1/agents", "").StatusCode)
	requireProblem(t, serveAs(withAdmin, "127.0.0.1:1", "GET", "/api/admin/v1/status", ""), http.StatusUnauthorized, "unauthorized")
	assert.Equal(t, http.StatusOK, serveAs(withAdmin, remote, "GET", "/api/admin/v1/status", "Bearer a1").StatusCode)
	requireProblem(t, serveAs(withAdmin, remote, "GET", "/api/v1/agents", ""), http.StatusForbidden, "forbidden")
}

func TestInput_Bodies(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	msgs := "/api/v1/sessions/" + sid + "/messages"
	for _, tc := range []struct {
		name, path, body string
		detail           string // a part of the problem's detail
	}{
		{"empty body", msgs, "", "empty"},
		{"truncated", msgs, `{"content":`, "middle"},
		{"not JSON", msgs, `{content: hi}`, "not valid JSON"},
		{"unknown field", msgs, `{"content":"hi","colour":"red"}`, `"colour"`},
		{"wrong type", msgs, `{"content":5}`, `"content"`},
		{"wrong type nested", "/api/v1/sessions", `{"agent":["a"]}`, `"agent"`},
		{"empty content", msgs, `{"content":""}`, `"content"`},
		{"two values", msgs, `{"content":"a"} {"content":"b"}`, "one"},
		{"array", msgs, `["hi"]`, "object"},
		{"stream unknown field", "/api/v1/sessions/" + sid + "/stream", `{"text":"hi"}`, `"text"`},
		{"session unknown field", "/api/v1/sessions", `{"agent":"assistant","model":"x"}`, `"model"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := requireProblem(t, e.do("POST", tc.path, tc.body), http.StatusBadRequest, "invalid_request")
			assert.Contains(t, p.Detail, tc.detail)
		})
	}
	assert.Empty(t, e.fake.Requests(), "no bad request reached the model")
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
