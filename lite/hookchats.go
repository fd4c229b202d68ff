package lite

import (
	"context"
	"errors"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/lite/hooks"
)

// hookChats is the root's side of the webhooks (hooks.Chats): the chat
// map gives a chat's session, the running gateways follow it.
type hookChats struct{ app *App }

var _ hooks.Chats = hookChats{}

// Current is Chats.Current with a chat that has no session yet as "".
func (c hookChats) Current(gateway, chatID string) (string, error) {
	sid, _, err := c.app.Chats().Current(gateway, chatID)
	if errors.Is(err, chats.ErrNoChat) {
		return "", nil
	}
	return sid, err
}

func (c hookChats) NewSession(ctx context.Context, in agents.Inbound, agent string) (string, error) {
	return c.app.Chats().NewSession(ctx, in, agent)
}

func (c hookChats) Follow(ctx context.Context, gateway, sid, chatID string) error {
	return c.app.Follow(ctx, gateway, sid, chatID)
}
