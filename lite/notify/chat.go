package notify

import (
	"context"
	"errors"
	"fmt"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// NoticeOrigin is the Origin of the notices the notification path posts
// into a chat's session.
const NoticeOrigin = "notify"

// Chats is what a chat notice needs of the sessions: where a session
// comes from, a chat's current session, and a notice posted into one.
type Chats interface {
	// Session is the session's gateway and chat (runtime.Loop.Session).
	Session(ctx context.Context, sessionID string) (runtime.SessionInfo, error)
	// Live is the chat's current session and its agent, a new one when
	// that session has ended; ErrNoChat (matched with errors.Is) when the
	// chat has none.
	Live(ctx context.Context, gateway, chatID string) (sessionID, agent string, err error)
	// Notice posts a notice into the session (runtime.Loop.Notice).
	Notice(ctx context.Context, sessionID string, n runtime.Notice) (uint64, error)
}

// Outbox has a gateway deliver a session's new messages to its chat, as
// it delivers its own turns' replies: durably, never twice.
type Outbox interface {
	Follow(ctx context.Context, gateway, sessionID, chatID string) error
}

// ErrNoChat is Chats.Live's error for a chat that has no session yet.
var ErrNoChat = errors.New("this chat has no session yet")

// errNoChatToNotify is a chat delivery with no chat to go to: the log
// gets the notice instead.
var errNoChatToNotify = errors.New("the notification has no chat: it went to the log")

// chatNotice posts x as a notice (origin "notify") into the current
// session of the delivery's chat (d's gateway and chat_id, else x's, else
// the chat of x's session) and has the gateway follow that session: the
// gateway's outbox delivers it, durably and once. A chat the gateway has
// never served (no session), or whose session is another agent's, is
// refused: a notice enters the session's context.
func (w *Worker) chatNotice(ctx context.Context, d agents.Delivery, x Notification) error {
	if w.chats == nil || w.outbox == nil {
		return errNoChatToNotify
	}
	gw, chat := d.Gateway, d.ChatID
	if gw == "" {
		gw, chat = x.Gateway, x.ChatID
	}
	if gw == "" && x.SessionID != "" {
		if info, err := w.chats.Session(ctx, x.SessionID); err == nil {
			gw, chat = info.Gateway, info.ChatID
		}
	}
	if gw == "" || chat == "" {
		return errNoChatToNotify
	}
	sid, agent, err := w.chats.Live(ctx, gw, chat)
	if errors.Is(err, ErrNoChat) {
		return fmt.Errorf("%s chat %s has no session yet: a notice goes only to a chat that has written to the bot", gw, chat)
	}
	if err != nil {
		return err
	}
	if agent != x.Agent {
		// The notice would enter another agent's context.
		return fmt.Errorf("%s chat %s talks to agent %s, not %s: a notice goes only to a chat of the agent's own", gw, chat, agent, x.Agent)
	}
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	if _, err := w.chats.Notice(ctx, sid, runtime.Notice{Content: x.Text, Origin: NoticeOrigin}); err != nil {
		return err
	}
	if err := w.outbox.Follow(ctx, gw, sid, chat); err != nil {
		return fmt.Errorf("the notice is in the chat's session but not delivered yet: %w", err)
	}
	return nil
}
