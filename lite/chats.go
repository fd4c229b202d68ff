package lite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/inbox"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Chats maps gateways' chats to sessions: one session per chat, its agent
// chosen by the routes and admitted by the agent's access rules, the
// mapping kept in the store's kv so a restart finds the same session.
// Gateways (Telegram, plugins) use it; it is safe for concurrent use.
type Chats struct{ app *App }

// Chats returns the chat→session map.
func (a *App) Chats() *Chats { return &Chats{app: a} }

type chatEntry struct {
	Session string `json:"session"`
	Agent   string `json:"agent"`
}

func chatKey(gateway, chatID string) string { return "chat/" + gateway + "/" + chatID }

// Session returns the chat's session, starting one with the routed agent
// when the chat has none (or its session is gone or ended: a ttl_hours
// expiry starts the chat afresh, as /reset does). A message the agent's
// access refuses is an *agents.AccessError.
func (c *Chats) Session(ctx context.Context, in agents.Inbound) (sid, agent string, err error) {
	e, err := c.entry(in.Gateway, in.ChatID)
	if err != nil {
		return "", "", err
	}
	if e != nil && c.open(ctx, e.Session) {
		spec, err := c.app.Agents.Spec(e.Agent)
		if err != nil {
			return "", "", err
		}
		if err := spec.Admit(in); err != nil {
			return "", "", err
		}
		return e.Session, e.Agent, nil
	}
	agent, err = c.app.Route(in)
	if err != nil {
		return "", "", err
	}
	sid, err = c.NewSession(ctx, in, agent)
	return sid, agent, err
}

// Admit applies the chat's agent's spec.access to a message before
// anything else: the agent of the chat's session, or the routed one when
// it has none; a refusal is an *agents.AccessError and creates nothing.
// An admitted message gets the chat's session (started when missing and
// create is set, unless its disposition is Block), and the chat's queue.
// Commands (/status, /reset) are admitted with create false.
func (c *Chats) Admit(ctx context.Context, in agents.Inbound, create bool) (inbox.Admission, error) {
	var ad inbox.Admission
	e, err := c.entry(in.Gateway, in.ChatID)
	if err != nil {
		return ad, err
	}
	if e != nil && c.open(ctx, e.Session) {
		ad.Session, ad.Agent = e.Session, e.Agent
	}
	if ad.Agent == "" {
		ad.Agent = c.app.router.Agent(in)
	}
	spec, err := c.app.Agents.Spec(ad.Agent)
	if err != nil {
		return inbox.Admission{}, err
	}
	if err := spec.Admit(in); err != nil {
		return inbox.Admission{}, err
	}
	ad.Disposition, ad.Queue = spec.Disposition(in), spec.QueueFor(in)
	if create && ad.Session == "" && ad.Disposition != agents.Block {
		if ad.Session, err = c.NewSession(ctx, in, ad.Agent); err != nil {
			return inbox.Admission{}, err
		}
	}
	return ad, nil
}

// NewSession starts a fresh session for the chat with agent (/new, /reset,
// /agent NAME); the old session is kept in the store. It starts from the
// agent's spec and does not wait for the agent to be built: its first
// turn does, and a build that fails fails that turn, in the chat.
func (c *Chats) NewSession(ctx context.Context, in agents.Inbound, agent string) (string, error) {
	spec, err := c.app.Agents.Spec(agent)
	if err != nil {
		return "", err
	}
	info, err := c.app.Loop.CreateSession(ctx, runtime.NewSession{Agent: agent, Gateway: in.Gateway, ChatID: in.ChatID,
		Principal: chatPrincipal(in), Spec: spec})
	if err != nil {
		return "", err
	}
	data, _ := json.Marshal(chatEntry{Session: info.ID, Agent: agent})
	if err := c.app.Loop.PutKV(ctx, chatKey(in.Gateway, in.ChatID), data); err != nil {
		return "", fmt.Errorf("remember the session of chat %s: %w", in.ChatID, err)
	}
	return info.ID, nil
}

// chatPrincipal is whom a chat's session speaks for: a Telegram user (a
// private chat's id is its user's) or group, or a plugin's chat. The
// chat, not the sender: everyone in a group shares its session.
func chatPrincipal(in agents.Inbound) agents.Principal {
	if in.Gateway == telegram.GatewayName {
		return agents.TelegramPrincipal(in.ChatID, in.Group())
	}
	return agents.PluginPrincipal(in.Gateway, in.ChatID)
}

// open reports whether the session exists and takes messages.
func (c *Chats) open(ctx context.Context, sid string) bool {
	info, err := c.app.Loop.Session(ctx, sid)
	return err == nil && info.Status != runtime.SessionCompleted
}

func (c *Chats) entry(gateway, chatID string) (*chatEntry, error) {
	data, err := c.app.Loop.KV(context.Background(), chatKey(gateway, chatID))
	if err != nil || data == nil {
		return nil, err
	}
	var e chatEntry
	if json.Unmarshal(data, &e) != nil || e.Session == "" {
		return nil, nil // unreadable: start afresh
	}
	return &e, nil
}

// ErrNoChat is returned for a chat that has no session yet.
var ErrNoChat = errors.New("this chat has no session yet")

// Current returns the chat's session without starting one.
func (c *Chats) Current(gateway, chatID string) (sid, agent string, err error) {
	e, err := c.entry(gateway, chatID)
	if err != nil {
		return "", "", err
	}
	if e == nil {
		return "", "", ErrNoChat
	}
	return e.Session, e.Agent, nil
}

// Live returns the chat's session as Current does, but when that session
// has ended (its ttl_hours expired it) starts a new one with the same
// agent first, as the chat's next message would: schedules, heartbeats and
// notices for the chat go on after an expiry.
func (c *Chats) Live(ctx context.Context, gateway, chatID string) (sid, agent string, err error) {
	sid, agent, err = c.Current(gateway, chatID)
	if err != nil || c.open(ctx, sid) {
		return sid, agent, err
	}
	if _, err := c.app.Loop.Session(ctx, sid); errors.Is(err, runtime.ErrSessionNotFound) {
		return sid, agent, nil // deleted: the caller's own error says so
	}
	sid, err = c.NewSession(ctx, agents.Inbound{Gateway: gateway, ChatID: chatID}, agent)
	return sid, agent, err
}

// KV reads a gateway's own state (cursors, delivery marks).
func (c *Chats) KV(key string) ([]byte, error) { return c.app.Loop.KV(context.Background(), key) }

// PutKV writes a gateway's own state in the loop's next group commit: it
// shares the fsync of the events committed with it.
func (c *Chats) PutKV(key string, val []byte) error {
	return c.app.Loop.PutKV(context.Background(), key, val)
}
