package plugin

import (
	"context"
	"fmt"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/inbox"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// queuedRef is what the queue keeps of a plugin's message.
type queuedRef struct {
	sid   string
	in    agents.Inbound
	msgID string
}

// newQueue makes the bridge's queue: its timers hand what waited to the
// Gateway's goroutine (onQueued), which alone touches the bridge.
func (b *bridge) newQueue() *inbox.Inbox {
	return inbox.New(inbox.Options{
		Busy: func(_ string, last inbox.Item) bool {
			q, _ := last.Ref.(queuedRef)
			return b.busy(context.Background(), q.sid)
		},
		Deliver: func(_ string, items []inbox.Item) {
			select {
			case b.queued <- items:
			case <-b.quit:
			}
		},
	})
}

// queueKey names a chat in the bridge's queue.
func (b *bridge) queueKey(chat string) string { return b.name + "\x00" + chat }

// busy reports whether the session runs a turn.
func (b *bridge) busy(ctx context.Context, sid string) bool {
	ctx, cancel := context.WithTimeout(ctx, b.t.CallTimeout)
	defer cancel()
	info, err := b.rt.Session(ctx, sid)
	return err == nil && info.Status.InTurn()
}

// onQueued sends what waited for a turn, joined.
func (b *bridge) onQueued(ctx context.Context, items []inbox.Item) {
	ctx, cancel := context.WithTimeout(ctx, b.t.CallTimeout)
	defer cancel()
	b.send(ctx, inbox.Join(items))
}

// stopQueue hands on what waits at stop, joined per chat: the runtime
// keeps it for the turn after the running one, also across the restart.
func (b *bridge) stopQueue(ctx context.Context) {
	for _, l := range b.queue.Stop() {
		b.onQueued(ctx, l.Items)
	}
}

// keep stores a group message the agent listens to without answering:
// passive (in the conversation) or silent (as a silent_message).
func (b *bridge) keep(ctx context.Context, in agents.Inbound, m MessageReceived, ad inbox.Admission, text string) {
	if text == "" {
		return
	}
	how := runtime.KeepSilent
	if ad.Disposition == agents.Passive {
		how = runtime.KeepPassive
	}
	input := runtime.Input{Content: inbox.Text(in, m.Sender.Name(), text), SenderID: in.SenderID, SenderName: m.Sender.Name(), Keep: how}
	if _, err := b.rt.Send(ctx, ad.Session, input); err != nil {
		b.log.Error("plugin group message not stored", "plugin", b.name, "session", ad.Session, "err", err)
	}
}

// coreCommand is "reset", "status" or "compact" for the commands the
// core answers itself, else "".
func coreCommand(text string) string {
	switch text {
	case "/reset", "/status", "/compact":
		return text[1:]
	}
	return ""
}

// runCommand answers /reset, /status and /compact (after the access
// check).
func (b *bridge) runCommand(ctx context.Context, cmd string, in agents.Inbound, ad inbox.Admission) string {
	if ad.Session == "" {
		if cmd == "reset" {
			return "No active session to reset."
		}
		return "No active session."
	}
	if cmd == "compact" {
		return b.compact(ctx, ad.Session)
	}
	if cmd == "reset" {
		if _, err := b.sessions.NewSession(ctx, in, ad.Agent); err != nil {
			b.log.Error("plugin /reset failed", "plugin", b.name, "chat", in.ChatID, "err", err)
			return sayNotHandled
		}
		return "Session reset. Send a message to start a new conversation."
	}
	info, err := b.rt.Session(ctx, ad.Session)
	if err != nil {
		b.log.Error("plugin /status failed", "plugin", b.name, "chat", in.ChatID, "err", err)
		return "Failed to get session status."
	}
	return fmt.Sprintf("Session: %s\nAgent: %s\nStatus: %s\nCreated: %s", info.ID, info.Agent, info.Status,
		info.Created.UTC().Format("2006-01-02 15:04")+" UTC")
}

// compact summarises the session's older messages. It waits at most the
// call's timeout (the bridge's one goroutine is held meanwhile); the
// summary goes on being written after that.
func (b *bridge) compact(ctx context.Context, sid string) string {
	res, err := b.rt.Compact(ctx, sid)
	if say, ok := runtime.SayCompact(res, err); ok {
		return say
	}
	b.log.Error("plugin /compact failed", "plugin", b.name, "session", sid, "err", err)
	return "Sorry, /compact failed: " + err.Error() + "."
}
