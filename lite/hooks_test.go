package lite

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/hooks"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// hookSecret is a hook secret long enough to be accepted.
const hookSecret = "0123456789abcdef0123"

const hookToken = "tok-0123456789abcdef"

// hookEnv is a daemon with hooks behind the HTTP API, its model a fake.
type hookEnv struct {
	t     *testing.T
	app   *App
	url   string
	model *llmtest.Server
	// now is the hooks' clock (time.Now until a test sets it) and logs
	// what they log; both outlive a restart.
	now  func() time.Time
	logs syncBuffer
}

func newHookEnv(t *testing.T, change func(map[string]config.Hook)) *hookEnv {
	t.Helper()
	return newHookEnvSpec(t, "", change)
}

// newHookEnvSpec is newHookEnv with spec lines for the agent (setSpec);
// "" keeps the default agent.
func newHookEnvSpec(t *testing.T, spec string, change func(map[string]config.Hook)) *hookEnv {
	t.Helper()
	cfg := mcpTestConfig(t)
	if spec != "" {
		setSpec(t, cfg.AgentsDir+"/assistant", spec)
	}
	cfg.Hooks = map[string]config.Hook{
		"github": {Agent: "assistant", Template: "{{.repository.full_name}}: {{.action}}", Secret: hookSecret},
		"ci":     {Agent: "assistant", Template: "build {{.status}}", Token: hookToken, Target: config.HookTarget{Gateway: "telegram", ChatID: "42"}},
		"off":    {Agent: "assistant", Template: "x"},
	}
	if change != nil {
		change(cfg.Hooks)
	}
	off := cfg.Hooks["off"]
	delete(cfg.Hooks, "off") // an empty secret is only accepted from a file that names the key
	require.NoError(t, cfg.Validate())
	off.Signed = true
	cfg.Hooks["off"] = off
	model := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", model.BaseURL())
	e := &hookEnv{t: t, model: model, now: time.Now}
	e.open(cfg)
	t.Cleanup(func() { e.app.Close() })
	return e
}

// open starts a daemon on cfg behind a new HTTP server.
func (e *hookEnv) open(cfg *config.Config) {
	t := e.t
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	e.app = app
	h := hooks.New(hooks.Options{Hooks: cfg.Hooks, Loop: app.Loop, Chats: hookChats{app},
		Logger: slog.New(slog.NewJSONHandler(&e.logs, nil)), Now: func() time.Time { return e.now() }})
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Loop: app.Loop, Agents: registry{app}, Hooks: h, APIToken: "api-token-0123456789"}))
	t.Cleanup(srv.Close)
	e.url = srv.URL
}

// restart stops the daemon and starts another on the same data dir, with
// the same clock.
func (e *hookEnv) restart() {
	require.NoError(e.t, e.app.Close())
	e.open(e.app.Config)
}

// sign is the signature of body with the hooks' secret.
func sign(body string) string { return hooks.Sign(hookSecret, []byte(body)) }

type hookAnswer struct {
	status int
	body   map[string]any
	header http.Header
}

func (e *hookEnv) post(name, body string, header map[string]string) hookAnswer {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/api/v1/hooks/"+name, strings.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	a := hookAnswer{status: resp.StatusCode, header: resp.Header}
	_ = json.Unmarshal(data, &a.body)
	return a
}

// github posts a push-like event signed with the hook's secret; like
// GitHub's, each delivery's body is its own.
func (e *hookEnv) github(delivery string) hookAnswer {
	body := `{"repository": {"full_name": "o/r"}, "action": "opened", "delivery": "` + delivery + `"}`
	return e.post("github", body, map[string]string{"X-Hub-Signature-256": sign(body), "X-GitHub-Delivery": delivery})
}

// userMessages returns the session's user messages once its turn has
// ended.
func (e *hookEnv) userMessages(sid string) []runtime.Event {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sub, err := e.app.Loop.Follow(ctx, sid, 0)
	require.NoError(e.t, err)
	defer sub.Close()
	var out []runtime.Event
	for {
		select {
		case ev := <-sub.C():
			switch ev.Type {
			case runtime.EvUserMessage:
				out = append(out, ev)
			case runtime.EvTurnEnd:
				return out
			}
		case <-ctx.Done():
			e.t.Fatal("no turn ended")
		}
	}
}

// sessions counts the sessions in the store.
func (e *hookEnv) sessions() int {
	list, err := e.app.Loop.Sessions(context.Background())
	require.NoError(e.t, err)
	return len(list)
}

func TestHooks_GitHubDeliveryRunsATurn(t *testing.T) {
	e := newHookEnv(t, nil)
	a := e.github("d-1")
	require.Equal(t, http.StatusAccepted, a.status, a.body)
	assert.Equal(t, "accepted", a.body["status"])
	sid, _ := a.body["session_id"].(string)
	require.NotEmpty(t, sid)
	msgs := e.userMessages(sid)
	require.Len(t, msgs, 1)
	assert.Equal(t, "o/r: opened", msgs[0].Content)
	assert.Equal(t, "webhook:github", msgs[0].Origin)
	assert.Equal(t, "o/r: opened", e.model.Requests()[0].LastUser(), "the turn ran")
	info, err := e.app.Loop.Session(context.Background(), sid)
	require.NoError(t, err)
	assert.Equal(t, hooks.GatewayName, info.Gateway)
	assert.Equal(t, "github", info.ChatID)

	b := e.github("d-2")
	require.Equal(t, http.StatusAccepted, b.status)
	assert.Equal(t, sid, b.body["session_id"], "the hook keeps its session")
}

func TestHooks_SignatureRefused(t *testing.T) {
	e := newHookEnv(t, nil)
	body := `{"repository": {"full_name": "o/r"}, "action": "opened"}`
	good := sign(body)
	for name, h := range map[string]map[string]string{
		"missing":     {},
		"wrong":       {"X-Hub-Signature-256": sign(body + " ")},
		"sha1 prefix": {"X-Hub-Signature-256": "sha1=" + strings.TrimPrefix(good, "sha256=")},
		"no prefix":   {"X-Hub-Signature-256": strings.TrimPrefix(good, "sha256=")},
		"not hex":     {"X-Hub-Signature-256": "sha256=zz"},
		"bearer":      {"Authorization": "Bearer " + hookSecret},
	} {
		a := e.post("github", body, h)
		assert.Equal(t, http.StatusUnauthorized, a.status, name)
		assert.Equal(t, "unauthorized", a.body["code"], name)
	}
	assert.Zero(t, e.sessions(), "nothing stored")
	assert.Empty(t, e.model.Requests(), "nothing run")
}

func TestHooks_BearerTokenToAChat(t *testing.T) {
	e := newHookEnv(t, nil)
	body := `{"status": "green"}`
	a := e.post("ci", body, map[string]string{"Authorization": "Bearer wrong-token-0123456"})
	assert.Equal(t, http.StatusUnauthorized, a.status)
	a = e.post("ci", body, map[string]string{"Authorization": "Bearer " + hookToken})
	require.Equal(t, http.StatusAccepted, a.status, a.body)
	sid := a.body["session_id"].(string)
	cur, agent, err := e.app.Chats().Current("telegram", "42")
	require.NoError(t, err)
	assert.Equal(t, sid, cur, "the chat's session, started for it")
	assert.Equal(t, "assistant", agent)
	msgs := e.userMessages(sid)
	require.Len(t, msgs, 1)
	assert.Equal(t, "build green", msgs[0].Content)
	assert.Equal(t, "webhook:ci", msgs[0].Origin)
}

func TestHooks_ReplayedDeliveryRunsOnce(t *testing.T) {
	e := newHookEnv(t, nil)
	a := e.github("same")
	require.Equal(t, http.StatusAccepted, a.status)
	b := e.github("same")
	assert.Equal(t, http.StatusOK, b.status)
	assert.Equal(t, "duplicate", b.body["status"])
	assert.Equal(t, a.body["session_id"], b.body["session_id"])
	assert.Len(t, e.userMessages(a.body["session_id"].(string)), 1)
}

func TestHooks_ConcurrentIdenticalDeliveriesRunOnce(t *testing.T) {
	e := newHookEnv(t, nil)
	const n = 8
	answers := make([]hookAnswer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { answers[i] = e.github("twin") })
	}
	wg.Wait()
	accepted, dup := 0, 0
	var sid string
	for _, a := range answers {
		switch a.status {
		case http.StatusAccepted:
			accepted++
			sid = a.body["session_id"].(string)
		case http.StatusOK:
			dup++
		}
	}
	assert.Equal(t, 1, accepted)
	assert.Equal(t, n-1, dup)
	require.NotEmpty(t, sid)
	assert.Len(t, e.userMessages(sid), 1)
}

func TestHooks_RefusalsStoreNothing(t *testing.T) {
	e := newHookEnv(t, func(h map[string]config.Hook) {
		g := h["github"]
		g.MaxBodyKB = 1
		g.Template = "{{.repository.full_name}}"
		h["github"] = g
	})
	big := `{"action": "` + strings.Repeat("x", 2000) + `"}`
	a := e.post("github", big, map[string]string{"X-Hub-Signature-256": sign(big)})
	assert.Equal(t, http.StatusRequestEntityTooLarge, a.status)

	a = e.post("github", `{"action": `, map[string]string{"X-Hub-Signature-256": sign(`{"action": `)})
	assert.Equal(t, http.StatusBadRequest, a.status)
	assert.Contains(t, a.body["detail"], "not valid JSON")

	flat := `{"repository": "flat"}`
	a = e.post("github", flat, map[string]string{"X-Hub-Signature-256": sign(flat)})
	assert.Equal(t, http.StatusUnprocessableEntity, a.status)
	assert.Contains(t, a.body["detail"], "the template made an empty message of this body")

	a = e.post("github", big, nil)
	assert.Equal(t, http.StatusUnauthorized, a.status, "over the hook's limit but under every hook's: authenticated first")

	unknown := e.post("nope", `{}`, nil)
	assert.Equal(t, http.StatusUnauthorized, unknown.status)
	disabled := e.post("off", `{}`, nil)
	assert.Equal(t, http.StatusUnauthorized, disabled.status)
	assert.Equal(t, unknown.body["detail"], disabled.body["detail"], "a disabled hook answers as an unknown one")

	body := `{"repository": {"full_name": "o/r"}}`
	a = e.post("github", body, map[string]string{"X-Hub-Signature-256": sign(body), "Origin": "https://evil.example"})
	assert.Equal(t, http.StatusForbidden, a.status)

	a = e.post("github", body, map[string]string{"X-Hub-Signature-256": sign(body), "X-GitHub-Event": "ping"})
	assert.Equal(t, http.StatusOK, a.status)
	assert.Equal(t, "ignored", a.body["status"])

	assert.Zero(t, e.sessions(), "nothing stored")
	assert.Empty(t, e.model.Requests(), "nothing run")
}

// A tunnel's Host (not in server.allowed_hosts) reaches a hook; the API
// token is not asked for.
func TestHooks_TunnelHost(t *testing.T) {
	e := newHookEnv(t, nil)
	body := `{"repository": {"full_name": "o/r"}, "action": "x"}`
	req, err := http.NewRequest(http.MethodPost, e.url+"/api/v1/hooks/github", strings.NewReader(body))
	require.NoError(t, err)
	req.Host = "abc.trycloudflare.com"
	req.Header.Set("X-Hub-Signature-256", sign(body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)

	req, _ = http.NewRequest(http.MethodGet, e.url+"/api/v1/sessions", nil)
	req.Host = "abc.trycloudflare.com"
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode, "only the hooks skip the Host check")
}

func TestHooks_RateLimit(t *testing.T) {
	e := newHookEnv(t, func(h map[string]config.Hook) {
		g := h["github"]
		g.MaxPerMinute = 2
		h["github"] = g
	})
	clock := time.Unix(1_700_000_000, 0)
	e.now = func() time.Time { return clock }
	assert.Equal(t, http.StatusAccepted, e.github("r1").status)
	assert.Equal(t, http.StatusAccepted, e.github("r2").status)
	a := e.github("r3")
	assert.Equal(t, http.StatusTooManyRequests, a.status)
	assert.Equal(t, "30", a.header.Get("Retry-After"))
	clock = clock.Add(31 * time.Second)
	assert.Equal(t, http.StatusAccepted, e.github("r3").status)
}

// followGateway is a running gateway that records what it is asked to
// follow.
type followGateway struct {
	mu      sync.Mutex
	follows []string
}

func (g *followGateway) Name() string                            { return "telegram" }
func (g *followGateway) Start(context.Context) error             { return nil }
func (g *followGateway) Stop(context.Context) error              { return nil }
func (g *followGateway) Deliver(context.Context, Outbound) error { return nil }
func (g *followGateway) Follow(_ context.Context, sid, chat string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.follows = append(g.follows, sid+"@"+chat)
	return nil
}

// A chat target's gateway follows the session, so the answer reaches the
// chat.
func TestHooks_ChatFollows(t *testing.T) {
	e := newHookEnv(t, nil)
	g := &followGateway{}
	e.app.gateways.set(gatewaySet{g})
	a := e.post("ci", `{"status": "red"}`, map[string]string{"Authorization": "Bearer " + hookToken})
	require.Equal(t, http.StatusAccepted, a.status)
	g.mu.Lock()
	assert.Equal(t, []string{a.body["session_id"].(string) + "@42"}, g.follows)
	g.mu.Unlock()
	e.userMessages(a.body["session_id"].(string))
}
