package notify

import (
	"context"
	"net/http"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// turnNoticeChars is how much of an answer a turn's notice carries.
const turnNoticeChars = 300

// TurnEnded is the turn-end handler of the notification path: a turn of
// a session no chat gateway serves (HTTP, CLI: a gateway's own watcher
// delivers its chats' turns) that ended with nobody watching it, or that
// a schedule, webhook or process started, gets a short notice per its
// agent's spec.notify.when. Heartbeats notify on their own (only an
// answer worth saying); a subagent's turns get none. On the loop
// goroutine: it only queues.
func (w *Worker) TurnEnded(te runtime.TurnEnd) {
	if w.chatGateway(te.Gateway, te.ChatID) || te.Agent == "" || te.Origin == agents.OriginHeartbeat || te.Gateway == runtime.GatewaySubagent {
		return
	}
	unwatched := !te.Watched || te.Origin != ""
	if !unwatched && !w.notifyAlways(te.Agent) {
		return
	}
	n := turnNotification(te)
	w.enqueue(job{what: "turn notice of " + te.Agent, run: func(ctx context.Context, c *http.Client) {
		set, _ := w.settings(te.Agent)
		if set.When == agents.NotifyNever || (set.When != agents.NotifyAlways && !unwatched) {
			return
		}
		w.deliverAll(ctx, c, set.Deliveries, n)
	}})
}

// chatGateway reports whether a session of gateway and chat is a chat of
// a gateway agnx.yaml configures, whose own outbox delivers its turns.
func (w *Worker) chatGateway(gateway, chat string) bool {
	return w.gateways != nil && w.gateways.ServesChat(gateway, chat)
}

// notifyAlways reports whether the agent, as last built, notifies of
// every turn; it reads only the cache (the loop goroutine must not load
// files).
func (w *Worker) notifyAlways(agent string) bool {
	la, ok := w.agents.CachedAgent(agent)
	return ok && la.Spec.Notify.When == agents.NotifyAlways
}

// turnOutcomes say how a turn that did not complete ended.
var turnOutcomes = map[string]string{
	runtime.TurnFailed:      "the turn failed",
	runtime.TurnCancelled:   "the turn was cancelled",
	runtime.TurnInterrupted: "the turn was interrupted (agnx-lite stopped)",
	runtime.TurnPaused:      "the turn is paused: send a message to go on",
}

// turnNotification is the notice of a turn's end: "<agent>: <the answer's
// first 300 characters>", or what went wrong.
func turnNotification(te runtime.TurnEnd) Notification {
	text := strings.TrimSpace(te.Answer)
	if te.Reason != runtime.TurnCompleted {
		what, ok := turnOutcomes[te.Reason]
		if !ok {
			what = "the turn ended (" + te.Reason + ")"
		}
		if text != "" {
			what += ": " + text
		}
		text = what
	} else if text == "" {
		text = "done, with no answer"
	}
	if r := []rune(text); len(r) > turnNoticeChars {
		text = string(r[:turnNoticeChars]) + "…"
	}
	return Notification{Agent: te.Agent, SessionID: te.SessionID, Origin: te.Origin,
		Title: te.Agent + ": turn " + te.Reason, Text: te.Agent + ": " + text}
}
