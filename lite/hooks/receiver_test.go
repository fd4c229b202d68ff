package hooks

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// hookSecret and hookToken are a secret and a token long enough to be
// accepted.
const (
	hookSecret = "0123456789abcdef0123"
	hookToken  = "tok-0123456789abcdef"
)

// sign is the signature of body with hookSecret.
func sign(body string) string { return Sign(hookSecret, []byte(body)) }

// okModel answers every call at once: a turn a delivery starts ends.
type okModel struct{}

func (okModel) Stream(context.Context, *runtime.Request, func(runtime.Delta)) (*runtime.Response, error) {
	return &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant, Content: "ok"}}, nil
}

// oneAgent serves the agent "assistant".
type oneAgent struct{ a *runtime.LoadedAgent }

func (o oneAgent) LoadAgent(name string) (*runtime.LoadedAgent, error) {
	if name != o.a.Spec.Name {
		return nil, runtime.ErrAgentNotFound
	}
	return o.a, nil
}

// fakeChats is the root as the hooks see it: each chat's current session,
// and the follows it was asked for ("gateway:sid@chat"). currentErr and
// followErr, when set, are what Current and Follow fail with.
type fakeChats struct {
	loop       *runtime.Loop
	current    map[string]string // gateway/chat → session
	started    int
	follows    []string
	currentErr error
	followErr  error
}

func (c *fakeChats) Current(gateway, chatID string) (string, error) {
	return c.current[gateway+"/"+chatID], c.currentErr
}

func (c *fakeChats) NewSession(ctx context.Context, in agents.Inbound, agent string) (string, error) {
	info, err := c.loop.CreateSession(ctx, runtime.NewSession{Agent: agent, Gateway: in.Gateway, ChatID: in.ChatID})
	if err != nil {
		return "", err
	}
	c.started++
	c.current[in.Gateway+"/"+in.ChatID] = info.ID
	return info.ID, nil
}

func (c *fakeChats) Follow(_ context.Context, gateway, sid, chatID string) error {
	c.follows = append(c.follows, gateway+":"+sid+"@"+chatID)
	return c.followErr
}

// unit is a Receiver over a real loop on a temporary store, with fake
// chats: the hooks "github" (signed, a session of its own) and "ci" (a
// bearer token, into Telegram chat 42). The Receiver is called as the
// HTTP API calls it; the deliveries' turns run on okModel.
type unit struct {
	t     *testing.T
	loop  *runtime.Loop
	chats *fakeChats
	hooks *Receiver
	// now is the hooks' clock, logs what they log.
	now  func() time.Time
	logs bytes.Buffer
}

func newUnit(t *testing.T) *unit {
	t.Helper()
	cfg := config.Default()
	cfg.Hooks = map[string]config.Hook{
		"github": {Agent: "assistant", Template: "{{.repository.full_name}}: {{.action}}", Secret: hookSecret},
		"ci":     {Agent: "assistant", Template: "build {{.status}}", Token: hookToken, Target: config.HookTarget{Gateway: "telegram", ChatID: "42"}},
	}
	require.NoError(t, cfg.Validate())
	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	spec := &agents.Agent{Name: "assistant", Workspace: t.TempDir(), Model: agents.Model{Provider: "ollama", Name: "test"},
		Session: agents.Session{OnDisconnect: "pause", MaxToolIterations: 10, LLMTimeoutSeconds: 30,
			Context: agents.Context{MaxHistoryTokens: 20000, MaxToolResultTokens: 8000, ToolResultTruncation: "head"}}}
	loop := runtime.New(runtime.Options{Store: st, Agents: oneAgent{&runtime.LoadedAgent{Spec: spec, Provider: okModel{}}}})
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- loop.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-ran)
		require.NoError(t, st.Close())
	})
	<-loop.Ready()
	u := &unit{t: t, loop: loop, chats: &fakeChats{loop: loop, current: map[string]string{}}, now: time.Now}
	u.hooks = New(Options{Hooks: cfg.Hooks, Loop: loop, Chats: u.chats,
		Logger: slog.New(slog.NewJSONHandler(&u.logs, nil)), Now: func() time.Time { return u.now() }})
	return u
}

// github delivers a push-like event to "github", signed, under the
// delivery id; like GitHub's, each delivery's body is its own.
func (u *unit) github(delivery string) (httpapi.HookReceipt, error) {
	body := `{"repository": {"full_name": "o/r"}, "action": "opened", "delivery": "` + delivery + `"}`
	header := http.Header{"X-Hub-Signature-256": {sign(body)}, "X-Github-Delivery": {delivery}}
	return u.hooks.Deliver(context.Background(), "github", header, []byte(body))
}

// ci delivers body to "ci" with its token.
func (u *unit) ci(body string) (httpapi.HookReceipt, error) {
	header := http.Header{"Authorization": {"Bearer " + hookToken}}
	return u.hooks.Deliver(context.Background(), "ci", header, []byte(body))
}

// said lists the user messages stored in the session, as origin: content.
func (u *unit) said(sid string) []string {
	u.t.Helper()
	var out []string
	err := u.loop.Events(context.Background(), sid, 0, func(ev runtime.Event) error {
		if ev.Type == runtime.EvUserMessage {
			out = append(out, ev.Origin+": "+ev.Content)
		}
		return nil
	})
	require.NoError(u.t, err)
	return out
}

// session starts a session for Telegram chat 42 without a message, as
// the chat's own.
func (u *unit) session() string {
	u.t.Helper()
	sid, err := u.chats.NewSession(context.Background(), agents.Inbound{Gateway: "telegram", ChatID: "42"}, "assistant")
	require.NoError(u.t, err)
	u.chats.started = 0
	return sid
}

// A hook into a chat posts in the chat's session when it takes messages,
// else in a new one started for the chat; either way the chat's gateway
// follows it, so the answer reaches the chat.
func TestReceiver_ChatTarget(t *testing.T) {
	ctx := context.Background()
	t.Run("none yet", func(t *testing.T) {
		u := newUnit(t)
		r, err := u.ci(`{"status": "green"}`)
		require.NoError(t, err)
		assert.Equal(t, "accepted", r.Status)
		assert.Equal(t, map[string]string{"telegram/42": r.SessionID}, u.chats.current, "started for the chat")
		assert.Equal(t, []string{"webhook:ci: build green"}, u.said(r.SessionID))
		assert.Equal(t, []string{"telegram:" + r.SessionID + "@42"}, u.chats.follows)
	})
	t.Run("open", func(t *testing.T) {
		u := newUnit(t)
		sid := u.session()
		r, err := u.ci(`{"status": "red"}`)
		require.NoError(t, err)
		assert.Equal(t, sid, r.SessionID, "the chat's own session")
		assert.Zero(t, u.chats.started)
		assert.Equal(t, []string{"webhook:ci: build red"}, u.said(sid))
	})
	t.Run("ended", func(t *testing.T) {
		u := newUnit(t)
		old := u.session()
		require.NoError(t, u.loop.EndSession(ctx, old, "timeout"))
		r, err := u.ci(`{"status": "red"}`)
		require.NoError(t, err)
		assert.NotEqual(t, old, r.SessionID, "an ended session takes no message: a new one for the chat")
		assert.Equal(t, 1, u.chats.started)
		assert.Empty(t, u.said(old))
	})
	t.Run("not followed", func(t *testing.T) {
		u := newUnit(t)
		u.chats.followErr = errors.New(`gateway "telegram" is not running`)
		r, err := u.ci(`{"status": "green"}`)
		require.NoError(t, err, "the message is stored: the chat gets it when its gateway starts")
		assert.Equal(t, "accepted", r.Status)
		assert.Contains(t, u.logs.String(), "the chat does not follow its session")
	})
	t.Run("chat map fails", func(t *testing.T) {
		u := newUnit(t)
		u.chats.currentErr = errors.New("the store is closed")
		_, err := u.ci(`{"status": "green"}`)
		require.ErrorIs(t, err, u.chats.currentErr)
		var he *httpapi.HookError
		assert.False(t, errors.As(err, &he), "not the caller's fault: a 500")
		assert.Zero(t, u.chats.started)
		list, err := u.loop.Sessions(ctx)
		require.NoError(t, err)
		assert.Empty(t, list, "nothing stored")
	})
}

// A hook with no target posts in a session of its own, of no gateway:
// none is asked to follow it, and the hook keeps it.
func TestReceiver_OwnSession(t *testing.T) {
	u := newUnit(t)
	a, err := u.github("d-1")
	require.NoError(t, err)
	info, err := u.loop.Session(context.Background(), a.SessionID)
	require.NoError(t, err)
	assert.Equal(t, GatewayName, info.Gateway)
	assert.Equal(t, "github", info.ChatID)
	b, err := u.github("d-2")
	require.NoError(t, err)
	assert.Equal(t, a.SessionID, b.SessionID)
	assert.Equal(t, []string{"webhook:github: o/r: opened", "webhook:github: o/r: opened"}, u.said(a.SessionID))
	assert.Empty(t, u.chats.follows)
	assert.Empty(t, u.chats.current)
}
