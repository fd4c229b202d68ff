package lite

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
)

// telegramStopTimeout is how long stopping the gateway waits for replies
// being streamed to finish; the rest is delivered at the next start.
const telegramStopTimeout = 10 * time.Second

// TelegramGateway is the running Telegram gateway; nil when it is
// disabled (its methods are nil-safe).
type TelegramGateway struct{ gw *telegram.Gateway }

// LastPoll is when Telegram last answered a poll (zero: never), for
// doctor and /metrics.
func (t *TelegramGateway) LastPoll() time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.gw.LastPoll()
}

// Stop stops polling and waits (up to 10 s) for replies being streamed.
func (t *TelegramGateway) Stop() {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), telegramStopTimeout)
	defer cancel()
	t.gw.Stop(ctx)
}

// StartTelegram starts the built-in Telegram gateway when
// gateways.telegram.enabled is set, and returns nil otherwise. It does not
// wait for Telegram: the bot connects, and reconnects, in the background.
// Only Stop ends it (ctx's cancellation does not), so that a shutdown can
// stop polling first and let replies being streamed finish.
func StartTelegram(ctx context.Context, app *App, log *slog.Logger) (*TelegramGateway, error) {
	if !app.Config.Gateways.Telegram.Enabled {
		return nil, nil
	}
	gw, err := NewTelegram(app, telegram.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	gw.Start(context.WithoutCancel(ctx))
	return &TelegramGateway{gw: gw}, nil
}

// NewTelegram builds the gateway from the config and the app, on top of
// o (which may carry test seams: timeouts, a sleep function, a client).
func NewTelegram(app *App, o telegram.Options) (*telegram.Gateway, error) {
	tc := app.Config.Gateways.Telegram
	o.Token, o.BaseURL, o.Allowlist = tc.BotToken.Value(), tc.APIBaseURL, tc.Allowlist
	o.Loop, o.Store = app.Loop, app.Store
	o.Chats = tgChats{app.Chats()}
	o.Agents = tgAgents{app}
	if o.Logger == nil {
		o.Logger = app.log
	}
	return telegram.New(o)
}

// tgChats adapts Chats to the gateway, translating lite's errors into the
// gateway's.
type tgChats struct{ c *Chats }

func (t tgChats) Session(ctx context.Context, in agents.Inbound) (string, string, error) {
	sid, agent, err := t.c.Session(ctx, in)
	return sid, agent, tgError(err)
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
	case errors.Is(err, ErrNoChat):
		return telegram.ErrNoChat
	}
	return err
}

type tgAgents struct{ app *App }

func (t tgAgents) Agent(name string) (telegram.AgentInfo, error) {
	la, err := t.app.Agents.LoadAgent(name)
	if err != nil {
		return telegram.AgentInfo{}, err
	}
	return telegram.AgentInfo{Workspace: la.Spec.Workspace, Model: la.Spec.Model.Provider + "/" + la.Spec.Model.Name}, nil
}

func (t tgAgents) Admit(name string, in agents.Inbound) error {
	la, err := t.app.Agents.LoadAgent(name)
	if err != nil {
		return err
	}
	return la.Spec.Admit(in)
}

var (
	_ telegram.Chats  = tgChats{}
	_ telegram.Agents = tgAgents{}
)
