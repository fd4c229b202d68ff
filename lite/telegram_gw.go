package lite

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/lite/inbox"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
)

// TelegramGateway is the built-in Telegram gateway as Serve runs it: a
// Gateway, plus the time of its last successful poll for doctor and
// /metrics.
type TelegramGateway struct {
	gw    *telegram.Gateway
	chats *chats.Chats
}

var (
	_ Gateway  = (*TelegramGateway)(nil)
	_ Follower = (*TelegramGateway)(nil)
)

// NewTelegram builds the Telegram gateway from the config
// (gateways.telegram) and the app, on top of o (which may carry test
// seams: timeouts, a sleep function, a client). It does not look at
// gateways.telegram.enabled: Serve builds it only when that is set.
func NewTelegram(app *App, o telegram.Options) (*TelegramGateway, error) {
	tc := app.Config.Gateways.Telegram
	o.Token, o.BaseURL, o.Allowlist = tc.BotToken.Value(), tc.APIBaseURL, tc.Allowlist
	o.Loop = app.Loop
	o.Chats = tgChats{app.Chats()}
	o.Agents = tgAgents{app}
	if o.Logger == nil {
		o.Logger = app.log
	}
	gw, err := telegram.New(o)
	if err != nil {
		return nil, err
	}
	return &TelegramGateway{gw: gw, chats: app.Chats()}, nil
}

// Name is "telegram".
func (t *TelegramGateway) Name() string { return telegram.GatewayName }

// Start starts polling in the background and returns at once: the bot
// connects, and reconnects, on its own. Replies owed from before (a turn
// that finished or resumed while the gateway was down) are delivered.
func (t *TelegramGateway) Start(ctx context.Context) error { return t.gw.Start(ctx) }

// Stop stops polling at once and waits, until ctx ends, for the replies
// being delivered; the rest is delivered at the next start.
func (t *TelegramGateway) Stop(ctx context.Context) error { return t.gw.Stop(ctx) }

// Deliver sends m to a Telegram chat that has a session from this gateway,
// formatted and split as the agents' replies are; any other chat is
// ErrNotServed.
func (t *TelegramGateway) Deliver(ctx context.Context, m Outbound) error {
	chat, err := strconv.ParseInt(m.ChatID, 10, 64)
	if err != nil {
		return fmt.Errorf("telegram chat %q: %w", m.ChatID, ErrNotServed)
	}
	if _, _, err := t.chats.Current(telegram.GatewayName, m.ChatID); errors.Is(err, chats.ErrNoChat) {
		return fmt.Errorf("telegram chat %s: %w", m.ChatID, ErrNotServed)
	} else if err != nil {
		return err
	}
	return t.gw.Deliver(ctx, chat, m.Text)
}

// Follow has the gateway deliver the session to a Telegram chat it
// serves, from what nobody has seen yet on, as replies are delivered:
// durably, never twice (see telegram.Gateway.Follow). Any other chat is
// ErrNotServed.
func (t *TelegramGateway) Follow(ctx context.Context, sessionID, chatID string) error {
	chat, err := strconv.ParseInt(chatID, 10, 64)
	if err != nil {
		return fmt.Errorf("telegram chat %q: %w", chatID, ErrNotServed)
	}
	if _, _, err := t.chats.Current(telegram.GatewayName, chatID); errors.Is(err, chats.ErrNoChat) {
		return fmt.Errorf("telegram chat %s: %w", chatID, ErrNotServed)
	} else if err != nil {
		return err
	}
	return t.gw.Follow(ctx, sessionID, chat)
}

// LastPoll is when Telegram last answered a poll (zero: never, or no
// gateway), for doctor and /metrics.
func (t *TelegramGateway) LastPoll() time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.gw.LastPoll()
}

// tgChats adapts Chats to the gateway, translating lite's errors into the
// gateway's.
type tgChats struct{ c *chats.Chats }

func (t tgChats) Session(ctx context.Context, in agents.Inbound) (string, string, error) {
	sid, agent, err := t.c.Session(ctx, in)
	return sid, agent, tgError(err)
}

func (t tgChats) Admit(ctx context.Context, in agents.Inbound, create bool) (inbox.Admission, error) {
	ad, err := t.c.Admit(ctx, in, create)
	return ad, tgError(err)
}

func (t tgChats) NewSession(ctx context.Context, in agents.Inbound, agent string) (string, error) {
	sid, err := t.c.NewSession(ctx, in, agent)
	return sid, tgError(err)
}

func (t tgChats) Current(gateway, chatID string) (string, string, error) {
	sid, agent, err := t.c.Current(gateway, chatID)
	return sid, agent, tgError(err)
}

func (t tgChats) KV(key string) ([]byte, error)      { return t.c.KV(key) }
func (t tgChats) PutKV(key string, val []byte) error { return t.c.PutKV(key, val) }

func tgError(err error) error {
	switch {
	case errors.Is(err, chats.ErrNoChat):
		return telegram.ErrNoChat
	}
	return err
}

type tgAgents struct{ app *App }

func (t tgAgents) Agent(name string) (telegram.AgentInfo, error) {
	spec, err := t.app.Agents.Spec(name)
	if err != nil {
		return telegram.AgentInfo{}, err
	}
	return telegram.AgentInfo{Workspace: spec.Workspace, Model: spec.Model.Provider + "/" + spec.Model.Name}, nil
}

func (t tgAgents) Admit(name string, in agents.Inbound) error {
	spec, err := t.app.Agents.Spec(name)
	if err != nil {
		return err
	}
	return spec.Admit(in)
}

var (
	_ telegram.Chats  = tgChats{}
	_ telegram.Agents = tgAgents{}
)
