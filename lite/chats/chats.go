// Package chats maps the chats of the gateways (Telegram, plugins) to
// sessions: the routes pick a chat's agent, the agent's spec.access
// admits its sender, and the chat's session id is kept in the store's kv
// (chat/<gateway>/<chat id>) so that a restart finds the same session. It
// reads agents' specs only, never waits for an agent to be built, and
// keeps no state of its own beyond the loop's kv.
package chats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/inbox"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Chats maps gateways' chats to sessions: one session per chat, its agent
// chosen by the routes and admitted by the agent's access rules, the
// mapping kept in the store's kv so a restart finds the same session.
// Gateways (Telegram, plugins) use it; it is safe for concurrent use.
type Chats struct {
	loop   *runtime.Loop
	specs  Specs
	router *agents.Router
}

// Specs looks agents' specs up: their files read and validated, not
// built (the root's agent cache).
type Specs interface {
	Spec(name string) (*agents.Agent, error)
}

// New returns the chat map over the loop's sessions and kv, routing by
// agnx.yaml's routes and fallback agent.
func New(loop *runtime.Loop, specs Specs, cfg *config.Config) *Chats {
	return &Chats{loop: loop, specs: specs, router: NewRouter(cfg)}
}

// NewRouter is agnx.yaml's routes as the agents package's router.
func NewRouter(cfg *config.Config) *agents.Router {
	rules := make([]agents.RouteRule, len(cfg.Routes))
	for i, r := range cfg.Routes {
		rules[i] = agents.RouteRule{Gateway: r.Match.Gateway, ChatType: r.Match.ChatType,
			ChatID: r.Match.ChatID, SenderID: r.Match.SenderID, Agent: r.Agent}
	}
	return agents.NewRouter(rules, cfg.RouteFallback)
}

// Route picks the agent for an inbound message: the first route of
// agnx.yaml's routes that matches, else Config.RouteFallback; with neither
// the message is refused, as Agnx drops it. Then the agent's spec.access
// decides whether it takes the message. A refusal is an
// *agents.AccessError whose text says why, in one sentence.
func (c *Chats) Route(in agents.Inbound) (string, error) {
	name := c.router.Agent(in)
	if name == "" {
		return "", &agents.AccessError{Why: "no route in the config sends this chat to an agent (add a route, or set runtime.default_agent)"}
	}
	spec, err := c.specs.Spec(name)
	if err != nil {
		return "", err
	}
	if err := spec.Admit(in); err != nil {
		return "", err
	}
	return name, nil
}

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
		spec, err := c.specs.Spec(e.Agent)
		if err != nil {
			return "", "", err
		}
		if err := spec.Admit(in); err != nil {
			return "", "", err
		}
		return e.Session, e.Agent, nil
	}
	agent, err = c.Route(in)
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
		ad.Agent = c.router.Agent(in)
	}
	spec, err := c.specs.Spec(ad.Agent)
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
	spec, err := c.specs.Spec(agent)
	if err != nil {
		return "", err
	}
	info, err := c.loop.CreateSession(ctx, runtime.NewSession{Agent: agent, Gateway: in.Gateway, ChatID: in.ChatID,
		Principal: chatPrincipal(in), Spec: spec})
	if err != nil {
		return "", err
	}
	data, _ := json.Marshal(chatEntry{Session: info.ID, Agent: agent})
	if err := c.loop.PutKV(ctx, chatKey(in.Gateway, in.ChatID), data); err != nil {
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
	info, err := c.loop.Session(ctx, sid)
	return err == nil && info.Status != runtime.SessionCompleted
}

func (c *Chats) entry(gateway, chatID string) (*chatEntry, error) {
	data, err := c.loop.KV(context.Background(), chatKey(gateway, chatID))
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
	if _, err := c.loop.Session(ctx, sid); errors.Is(err, runtime.ErrSessionNotFound) {
		return sid, agent, nil // deleted: the caller's own error says so
	}
	sid, err = c.NewSession(ctx, agents.Inbound{Gateway: gateway, ChatID: chatID}, agent)
	return sid, agent, err
}

// KV reads a gateway's own state (cursors, delivery marks).
func (c *Chats) KV(key string) ([]byte, error) { return c.loop.KV(context.Background(), key) }

// PutKV writes a gateway's own state in the loop's next group commit: it
// shares the fsync of the events committed with it.
func (c *Chats) PutKV(key string, val []byte) error {
	return c.loop.PutKV(context.Background(), key, val)
}
