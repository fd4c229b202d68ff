package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
)

// fakeHooks has one hook, "gh", and reads 64 bytes at most; Deliver
// refuses other names as lite does, else answers what err says, and
// records the bodies it got.
type fakeHooks struct {
	mu     sync.Mutex
	bodies []string
	err    error
}

func (f *fakeHooks) MaxBody() int64 { return 64 }

func (f *fakeHooks) Deliver(_ context.Context, name string, _ http.Header, body []byte) (httpapi.HookReceipt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if name != "gh" {
		return httpapi.HookReceipt{}, &httpapi.HookError{Status: http.StatusUnauthorized, Msg: httpapi.HookRefused}
	}
	f.bodies = append(f.bodies, string(body))
	if f.err != nil {
		return httpapi.HookReceipt{}, f.err
	}
	return httpapi.HookReceipt{Status: "accepted", SessionID: "session_1"}, nil
}

func hookPost(t *testing.T, url, path, body string, header map[string]string) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	return resp, m
}

func TestServer_Hook(t *testing.T) {
	f := &fakeHooks{}
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Hooks: f, APIToken: "api-token-0123456789"}))
	defer srv.Close()

	// No API token, a tunnel's Host, a form's content type: the hook decides.
	resp, m := hookPost(t, srv.URL, "/api/v1/hooks/gh", `a=b`, map[string]string{"Host": "x.ngrok.app", "Content-Type": "text/plain"})
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	assert.Equal(t, map[string]any{"status": "accepted", "session_id": "session_1"}, m)

	for _, c := range []struct {
		name, path, body string
		header           map[string]string
		status           int
		code             string
	}{
		{"origin", "/api/v1/hooks/nope", `{}`, map[string]string{"Origin": "https://evil.example"}, 403, "origin_not_allowed"},
		{"fetch site", "/api/v1/hooks/gh", `{}`, map[string]string{"Sec-Fetch-Site": "same-origin"}, 403, "origin_not_allowed"},
		{"unknown", "/api/v1/hooks/nope", `{}`, nil, 401, "unauthorized"},
		{"bad name", "/api/v1/hooks/GH", `{}`, nil, 401, "unauthorized"},
		{"too big", "/api/v1/hooks/gh", strings.Repeat("x", 65), nil, 413, "payload_too_large"},
		{"too big, unknown", "/api/v1/hooks/nope", strings.Repeat("x", 65), nil, 413, "payload_too_large"},
	} {
		resp, m := hookPost(t, srv.URL, c.path, c.body, c.header)
		assert.Equal(t, c.status, resp.StatusCode, c.name)
		assert.Equal(t, c.code, m["code"], c.name)
		if c.status == 401 {
			assert.Equal(t, httpapi.HookRefused, m["detail"], "%s: the answer every unauthenticated delivery gets", c.name)
		}
	}
	assert.Len(t, f.bodies, 1, "refused requests never reach Deliver")

	// A chunked body over the limit is cut off as it is read.
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(strings.Repeat("y", 100)))
		pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/hooks/gh", pr)
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Len(t, f.bodies, 1)

	// GET is not a hook: it goes through the usual checks and routes.
	greq, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/hooks/gh", nil)
	gresp, err := http.DefaultClient.Do(greq)
	require.NoError(t, err)
	gresp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, gresp.StatusCode)
}

func TestServer_HookErrors(t *testing.T) {
	f := &fakeHooks{}
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Hooks: f}))
	defer srv.Close()
	f.err = &httpapi.HookError{Status: 429, Msg: "slow down", RetryAfter: 1500 * time.Millisecond}
	resp, m := hookPost(t, srv.URL, "/api/v1/hooks/gh", `{}`, nil)
	assert.Equal(t, 429, resp.StatusCode)
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))
	assert.Equal(t, "too_many_requests", m["code"])
	assert.Equal(t, "slow down", m["detail"])

	f.err = &httpapi.HookError{Status: 401, Msg: "missing or wrong token"}
	resp, m = hookPost(t, srv.URL, "/api/v1/hooks/gh", `{}`, nil)
	assert.Equal(t, 401, resp.StatusCode)
	assert.Equal(t, "unauthorized", m["code"])

	f.err = errors.New("disk on fire at /var/lib")
	resp, m = hookPost(t, srv.URL, "/api/v1/hooks/gh", `{}`, nil)
	assert.Equal(t, 500, resp.StatusCode)
	assert.NotContains(t, m["detail"], "/var/lib", "details go to the log")

	nohooks := httptest.NewServer(httpapi.New(httpapi.Options{}))
	defer nohooks.Close()
	resp, m = hookPost(t, nohooks.URL, "/api/v1/hooks/gh", `{}`, nil)
	assert.Equal(t, 401, resp.StatusCode, "no hooks at all answers as a wrong secret does")
	assert.Equal(t, httpapi.HookRefused, m["detail"])
}
