package notify

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// fakeAgents are the agents' spec.notify by name (a name it lacks cannot
// be read), and in cached those of the agents as last built.
type fakeAgents struct {
	specs  map[string]agents.NotifySettings
	cached map[string]agents.NotifySettings
}

func (f fakeAgents) Spec(name string) (*agents.Agent, error) {
	set, ok := f.specs[name]
	if !ok {
		return nil, errors.New("agent " + name + " not found")
	}
	return &agents.Agent{Name: name, Notify: set}, nil
}

func (f fakeAgents) CachedAgent(name string) (*runtime.LoadedAgent, bool) {
	set, ok := f.cached[name]
	if !ok {
		return nil, false
	}
	return &runtime.LoadedAgent{Spec: &agents.Agent{Name: name, Notify: set}}, true
}

// chatSession is a chat's session and its agent.
type chatSession struct{ id, agent string }

// fakeChats has sessions by id and chats ("gateway/chat") by their
// session; it records the notices posted ("session: text (origin)").
type fakeChats struct {
	sessions map[string]runtime.SessionInfo
	chats    map[string]chatSession
	notices  []string
}

func (f *fakeChats) Session(_ context.Context, id string) (runtime.SessionInfo, error) {
	info, ok := f.sessions[id]
	if !ok {
		return runtime.SessionInfo{}, runtime.ErrSessionNotFound
	}
	return info, nil
}

func (f *fakeChats) Live(_ context.Context, gateway, chatID string) (string, string, error) {
	c, ok := f.chats[gateway+"/"+chatID]
	if !ok {
		return "", "", ErrNoChat
	}
	return c.id, c.agent, nil
}

func (f *fakeChats) Notice(_ context.Context, id string, n runtime.Notice) (uint64, error) {
	f.notices = append(f.notices, id+": "+n.Content+" ("+n.Origin+")")
	return uint64(len(f.notices)), nil
}

// fakeOutbox records what it was asked to follow ("gateway session chat")
// and fails with err.
type fakeOutbox struct {
	follows []string
	err     error
}

func (f *fakeOutbox) Follow(_ context.Context, gateway, sessionID, chatID string) error {
	f.follows = append(f.follows, gateway+" "+sessionID+" "+chatID)
	return f.err
}

func chatFakes() (*fakeChats, *fakeOutbox) {
	return &fakeChats{
		sessions: map[string]runtime.SessionInfo{
			"s-tg":   {ID: "s-tg", Gateway: "telegram", ChatID: "42"},
			"s-http": {ID: "s-http", Gateway: "http"},
		},
		chats: map[string]chatSession{"telegram/42": {"s-tg", "ada"}, "telegram/7": {"s-bob", "bob"}},
	}, &fakeOutbox{}
}

// A chat notice goes into the current session of the delivery's chat, or
// the notification's, or its session's, and the gateway is asked to
// follow that session; no chat at all is errNoChatToNotify (the log).
func TestWorker_ChatNoticeFindsTheChat(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		d    agents.Delivery
		x    Notification
	}{
		{"the delivery's chat", agents.Delivery{Type: "chat", Gateway: "telegram", ChatID: "42"}, Notification{Agent: "ada", Gateway: "plugin", ChatID: "9"}},
		{"the notification's chat", agents.Delivery{Type: "chat"}, Notification{Agent: "ada", Gateway: "telegram", ChatID: "42"}},
		{"its session's chat", agents.Delivery{Type: "chat"}, Notification{Agent: "ada", SessionID: "s-tg"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			chats, outbox := chatFakes()
			w := New(Options{Chats: chats, Outbox: outbox})
			c.x.Text = "build green"
			require.NoError(t, w.chatNotice(ctx, c.d, c.x))
			assert.Equal(t, []string{"s-tg: build green (" + NoticeOrigin + ")"}, chats.notices)
			assert.Equal(t, []string{"telegram s-tg 42"}, outbox.follows)
		})
	}

	chats, outbox := chatFakes()
	w := New(Options{Chats: chats, Outbox: outbox})
	for _, x := range []Notification{{Agent: "ada", SessionID: "s-http"}, {Agent: "ada", SessionID: "gone"}, {Agent: "ada"}} {
		assert.ErrorIs(t, w.chatNotice(ctx, agents.Delivery{Type: "chat"}, x), errNoChatToNotify, "%+v", x)
	}
	assert.ErrorIs(t, New(Options{}).chatNotice(ctx, agents.Delivery{Type: "chat"}, Notification{Agent: "ada", Gateway: "telegram", ChatID: "42"}),
		errNoChatToNotify, "without Chats and Outbox, the log")
	assert.Empty(t, chats.notices)
	assert.Empty(t, outbox.follows)
}

// A chat with no session, or whose session is another agent's, gets no
// notice; a gateway that cannot follow yet leaves the notice in the
// session, and says so.
func TestWorker_ChatNoticeRefuses(t *testing.T) {
	ctx := context.Background()
	chats, outbox := chatFakes()
	w := New(Options{Chats: chats, Outbox: outbox})
	err := w.chatNotice(ctx, agents.Delivery{Type: "chat", Gateway: "telegram", ChatID: "77"}, Notification{Agent: "ada", Text: "x"})
	assert.EqualError(t, err, "telegram chat 77 has no session yet: a notice goes only to a chat that has written to the bot")
	err = w.chatNotice(ctx, agents.Delivery{Type: "chat", Gateway: "telegram", ChatID: "7"}, Notification{Agent: "ada", Text: "x"})
	assert.EqualError(t, err, "telegram chat 7 talks to agent bob, not ada: a notice goes only to a chat of the agent's own")
	assert.Empty(t, chats.notices)

	outbox.err = errors.New(`gateway "telegram" is not running`)
	err = w.chatNotice(ctx, agents.Delivery{Type: "chat"}, Notification{Agent: "ada", Gateway: "telegram", ChatID: "42", Text: "x"})
	assert.ErrorContains(t, err, "the notice is in the chat's session but not delivered yet")
	assert.ErrorIs(t, err, outbox.err)
	assert.Len(t, chats.notices, 1)
}

// Through the worker: a notification from a chat goes to that chat by
// default; a refused chat delivery is logged, a missing chat goes to the
// log instead.
func TestWorker_NotifyToChat(t *testing.T) {
	chats, outbox := chatFakes()
	var logs strings.Builder
	var mu sync.Mutex
	w := start(Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil)), Chats: chats, Outbox: outbox,
		Agents: fakeAgents{specs: map[string]agents.NotifySettings{
			"ada": {When: agents.NotifyUnwatched},
			"bob": {When: agents.NotifyUnwatched, Deliveries: []agents.Delivery{{Type: "chat", Gateway: "telegram", ChatID: "42"}, {Type: "chat"}}},
		}}})
	w.Notify(Notification{Agent: "ada", Gateway: "telegram", ChatID: "42", Text: "from the chat"})
	w.Notify(Notification{Agent: "bob", SessionID: "s-http", Text: "refused, then logged"})
	require.NoError(t, stop(w))

	assert.Equal(t, []string{"s-tg: from the chat (notify)"}, chats.notices)
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, logs.String(), "talks to agent ada, not bob")
	assert.Contains(t, logs.String(), `text="refused, then logged"`)
}
