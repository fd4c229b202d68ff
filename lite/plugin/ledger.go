package plugin

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxRequests bounds the commands awaiting command_ok or command_error.
const maxRequests = 512

// ledger is what the bridge remembers between messages: approvals
// waiting for an answer (by short id), commands waiting for their
// result, and when each chat was last refused.
type ledger struct {
	approvals map[string]approval
	requests  map[string]request
	refused   map[string]time.Time
	waiting   map[string]chan<- error // Deliver's messages, by request id
	seq       uint64
}

type approval struct{ sid, callID, chat, chatType string }

type request struct {
	kind, chat string
	at         time.Time
}

// track remembers a command until its result; a plugin that never
// answers cannot grow the map past maxRequests.
func (l *ledger) track(id, kind, chat string) {
	now := time.Now()
	if len(l.requests) >= maxRequests {
		for k, r := range l.requests {
			if now.Sub(r.at) > 5*time.Minute {
				delete(l.requests, k)
			}
		}
		if len(l.requests) >= maxRequests {
			return
		}
	}
	l.requests[id] = request{kind: kind, chat: chat, at: now}
}

// done records a command's result. A reply the plugin refused
// (command_error) counts as delivered too: the plugin had it, and says in
// the log why the chat did not.
func (b *bridge) done(ctx context.Context, id string, e *CommandError) {
	r, ok := b.requests[id]
	delete(b.requests, id)
	if e != nil {
		b.limit.log(b.log, slog.LevelWarn, "plugin gateway refused a command", "plugin", b.name, "request_id", id,
			"command", r.kind, "chat", r.chat, "known", ok, "code", e.Code, "message", e.Message)
	}
	if o := b.outgoing[id]; o != nil {
		delete(b.outgoing, id)
		if o.sending == id {
			b.acked(ctx, o, o.seq, o.turnEnd)
		}
	}
	if c := b.waiting[id]; c != nil {
		delete(b.waiting, id)
		if e != nil {
			c <- fmt.Errorf("the plugin could not send the message (%s: %s)", e.Code, e.Message)
		} else {
			c <- nil
		}
	}
}

// approveCmd is "/approve ID once|always|deny", typed or from a button.
type approveCmd struct{ id, decision string }

func parseApproval(s string) (approveCmd, bool) {
	f := strings.Fields(s)
	if len(f) != 3 || (f[0] != "/approve" && f[0] != "approve") {
		return approveCmd{}, false
	}
	d := map[string]string{"once": runtime.AllowOnce, "always": runtime.AllowAlways, "deny": runtime.DenyCall}[f[2]]
	return approveCmd{id: f[1], decision: d}, true
}

// onApproval asks the chat about a tool call: buttons when the plugin
// has them, else a command to type.
func (b *bridge) onApproval(o *outbox, e watchEvent) {
	var raw [3]byte
	for i := range raw {
		raw[i] = byte(rand.N(256))
	}
	id := hex.EncodeToString(raw[:])
	b.approvals[id] = approval{sid: o.sid, callID: e.callID, chat: o.rec.Chat, chatType: o.rec.ChatType}
	text := "The agent wants to use " + e.tool + ": " + e.subject
	if !b.caps.keyboard {
		text += "\nAnswer /approve " + id + " once, /approve " + id + " always or /approve " + id + " deny."
		b.sendReply(o, e, text, "", nil)
		return
	}
	btn := func(label, d string) Button { return Button{Text: label, CallbackData: "approve " + id + " " + d} }
	b.sendReply(o, e, text, "", &InlineKeyboard{Rows: [][]Button{{btn("Allow once", "once"), btn("Always", "always"), btn("Deny", "deny")}}})
}

// approve answers an approval from the chat's session sid and returns
// the sentence to show.
func (b *bridge) approve(ctx context.Context, sid, chat string, a approveCmd) string {
	p, ok := b.approvals[a.id]
	if !ok || p.sid != sid || p.chat != chat {
		return "No approval is waiting under the id " + a.id + " in this chat."
	}
	if a.decision == "" {
		return "Answer with once, always or deny: /approve " + a.id + " once"
	}
	err := b.rt.Approve(ctx, p.sid, p.callID, a.decision)
	delete(b.approvals, a.id)
	switch {
	case errors.Is(err, runtime.ErrNoApproval):
		return "That request was already answered, or it timed out."
	case err != nil:
		b.log.Error("plugin approval not recorded", "plugin", b.name, "session", sid, "err", err)
		return "Sorry, the answer could not be recorded; the agnx-lite log says why."
	}
	return map[string]string{runtime.AllowOnce: "Allowed once.", runtime.AllowAlways: "Allowed for the rest of this session.",
		runtime.DenyCall: "Denied."}[a.decision]
}

// onCallback answers a button press: only a sender the chat's agent
// admits may approve.
func (b *bridge) onCallback(ctx context.Context, q CallbackQuery) {
	ctx, cancel := context.WithTimeout(ctx, b.t.CallTimeout)
	defer cancel()
	answer := "This button is no longer active."
	if a, ok := parseApproval(q.Data); ok {
		p := b.approvals[a.id]
		in := agents.Inbound{Gateway: b.name, ChatType: chatType(p.chatType), ChatID: string(q.ChatID),
			SenderID: string(q.Sender.ID), Mentioned: true}
		sid, err := b.sessions.Session(ctx, in)
		var r *agents.AccessError
		switch {
		case errors.As(err, &r):
			answer = r.Why
		case err != nil:
			answer = sayNotHandled
		default:
			answer = b.approve(ctx, sid, in.ChatID, a)
		}
	}
	id := b.nextID()
	b.track(id, "answer_callback_query", string(q.ChatID))
	b.command(AnswerCallbackQuery{RequestID: id, CallbackQueryID: string(q.CallbackQueryID), Text: answer})
}

// forget drops the approvals of a session whose turn ended.
func (l *ledger) forget(sid string) {
	for id, a := range l.approvals {
		if a.sid == sid {
			delete(l.approvals, id)
		}
	}
}
