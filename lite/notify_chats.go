package lite

import (
	"context"
	"errors"

	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/lite/notify"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// notifyChats is the notification worker's way into the chats' sessions
// (notify.Chats). It goes through the App, not the loop itself: the
// worker is made before the loop, which tells it of its policies'
// notifications, and it is called only once the loop runs.
type notifyChats struct{ a *App }

var _ notify.Chats = notifyChats{}

func (c notifyChats) Session(ctx context.Context, sessionID string) (runtime.SessionInfo, error) {
	return c.a.Loop.Session(ctx, sessionID)
}

func (c notifyChats) Live(ctx context.Context, gateway, chatID string) (string, string, error) {
	sid, agent, err := c.a.Chats().Live(ctx, gateway, chatID)
	if errors.Is(err, chats.ErrNoChat) {
		err = notify.ErrNoChat
	}
	return sid, agent, err
}

func (c notifyChats) Notice(ctx context.Context, sessionID string, n runtime.Notice) (uint64, error) {
	return c.a.Loop.Notice(ctx, sessionID, n)
}
