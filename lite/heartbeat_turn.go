package lite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
)

// HeartbeatOK is the answer that tells a heartbeat there is nothing to
// say. An answer that is the marker, or begins or ends with it (in any
// case, markdown emphasis and punctuation around it ignored) with at most
// hbAckMax characters besides, is delivered to no one; a longer one is
// delivered without the marker. Other runtimes (OpenClaw) use the same
// marker and rule, so agents written for them behave the same here.
const HeartbeatOK = "HEARTBEAT_OK"

// hbAckMax is how much a model may say beside the marker ("HEARTBEAT_OK,
// all quiet") and still be taken as having nothing to say.
const hbAckMax = 300

// Heartbeat sessions are rotated once they hold hbMaxTurns turns: each
// heartbeat carries the session's history, which must stay small.
const hbMaxTurns = 20

// hbDirective ends every heartbeat message: the model is told the
// marker's rule there, not in its system prompt, so that only heartbeat
// turns know it.
const hbDirective = "---\nThis is your periodic heartbeat: no person wrote this message, and nobody reads your " +
	"answer unless you have something to say. If nothing needs the user's attention now, answer exactly " +
	HeartbeatOK + " and nothing else: nothing is sent. Otherwise answer with only what the user should " +
	"read (without " + HeartbeatOK + "); it is sent to them as you write it."

// hbNotice is what a heartbeat has to say and where it goes: a chat
// (Gateway and ChatID; deliver_to or the chat the agent last talked with)
// or, with Direct false, wherever the agent's notify settings send it.
type hbNotice struct {
	Agent, SessionID, Gateway, ChatID, Text string
	// Direct is set for spec.heartbeat.deliver_to: that chat, whatever
	// the notify settings say.
	Direct bool
}

// errHeartbeatBusy refuses a heartbeat while the last one still runs.
var errHeartbeatBusy = errors.New("the agent's last heartbeat is still running, so this one is skipped; make its instructions shorter or its heartbeat less frequent")

// heartbeatFire runs one heartbeat: the agent's instructions, prefixed
// with the time and followed by the marker's rule, go to its heartbeat
// session as a message with Origin "heartbeat", stored in the transaction
// that records the run (f.Record). The scheduler's Firer calls it for
// KindHeartbeat.
func (a *App) heartbeatFire(ctx context.Context, f sched.Firing) error { return a.hb.fire(ctx, f) }

func (h *heartbeats) fire(ctx context.Context, f sched.Firing) error {
	name := f.Schedule.Agent
	spec, err := h.agents.Spec(name)
	if errors.Is(err, runtime.ErrAgentNotFound) {
		h.trigger(name) // cancels its schedule
		return fmt.Errorf("agent %s is gone, so its heartbeat is cancelled", name)
	}
	if err != nil {
		return fmt.Errorf("heartbeat of agent %s: %w", name, err)
	}
	hb := spec.Heartbeat
	if hb == nil {
		h.trigger(name)
		return fmt.Errorf("agent %s has no HEARTBEAT.md nor spec.heartbeat any more, so its heartbeat is cancelled", name)
	}
	if err := budgetSkip(ctx, h.loop, name); err != nil {
		return err // past the budget: skipped, and the heartbeat session gets nothing
	}
	sid, err := h.session(ctx, name)
	if err != nil {
		return err
	}
	f.SetSession(sid)
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: h.message(hb), Origin: agents.OriginHeartbeat, Commit: f.Record})
	if err != nil {
		return fmt.Errorf("heartbeat of agent %s: %w", name, err)
	}
	return nil
}

// message is the heartbeat's user message.
func (h *heartbeats) message(hb *agents.Heartbeat) string {
	now := h.now().In(h.loc)
	return "[Heartbeat] " + now.Format("Monday 2006-01-02 15:04 MST") + "\n\n" +
		strings.TrimSpace(hb.Prompt) + "\n\n" + hbDirective
}

func hbSessionKey(agent string) string { return "heartbeat/session/" + agent }

// session returns the agent's heartbeat session: a session of its own
// (gateway "heartbeat", chat the agent's name), so a heartbeat never
// carries a chat's history. One that reached hbMaxTurns is replaced by a
// new one and deleted.
func (h *heartbeats) session(ctx context.Context, agent string) (string, error) {
	key := hbSessionKey(agent)
	data, err := h.loop.KV(ctx, key)
	if err != nil {
		return "", fmt.Errorf("read the heartbeat session of agent %s: %w", agent, err)
	}
	old := string(data)
	if old != "" {
		info, err := h.loop.Session(ctx, old)
		switch {
		case errors.Is(err, runtime.ErrSessionNotFound):
			old = ""
		case err != nil:
			return "", fmt.Errorf("read the heartbeat session of agent %s: %w", agent, err)
		case info.Status.InTurn():
			return "", errHeartbeatBusy
		case info.Agent == agent && info.Status != runtime.SessionCompleted && info.Turns < h.maxTurns:
			return old, nil
		}
	}
	info, err := h.loop.CreateSession(ctx, runtime.NewSession{Agent: agent, Gateway: agents.HeartbeatGateway, ChatID: agent,
		Principal: agents.HeartbeatPrincipal(agent)})
	if err != nil {
		return "", fmt.Errorf("start the heartbeat session of agent %s: %w", agent, err)
	}
	if err := h.loop.PutKV(ctx, key, []byte(info.ID)); err != nil {
		return "", fmt.Errorf("remember the heartbeat session of agent %s: %w", agent, err)
	}
	if old != "" {
		if err := h.loop.DeleteSession(ctx, old); err != nil && !errors.Is(err, runtime.ErrSessionNotFound) {
			h.log.Warn("old heartbeat session not deleted", "agent", agent, "session_id", old, "err", err)
		}
		h.log.Debug("heartbeat session rotated", "agent", agent, "old", old, "session_id", info.ID)
	}
	return info.ID, nil
}

// turnEnded is the heartbeats' onTurnEnd handler; it runs on the loop
// goroutine and only hands work on. It remembers the chat each agent last
// answered through a gateway, and hands a heartbeat's answer that is not
// the marker to the worker for delivery.
func (h *heartbeats) turnEnded(te runtime.TurnEnd) {
	if te.Origin != agents.OriginHeartbeat {
		if te.Origin == "" && te.Gateway != "" && te.Gateway != agents.HeartbeatGateway && te.ChatID != "" && h.isGateway(te.Gateway) {
			h.mu.Lock()
			h.lastChat[te.Agent] = chatRef{te.Gateway, te.ChatID}
			h.mu.Unlock()
		}
		return
	}
	if te.Reason != runtime.TurnCompleted {
		h.log.Warn("heartbeat turn did not complete; nothing is delivered", "agent", te.Agent,
			"session_id", te.SessionID, "reason", te.Reason, "err", te.Error)
		return
	}
	text, ok := heartbeatAnswer(te.Answer)
	if !ok {
		h.log.Debug("heartbeat: nothing to say", "agent", te.Agent, "session_id", te.SessionID)
		return
	}
	h.work.post(hbDeliverJob, func(ctx context.Context) {
		n := h.target(ctx, te.Agent)
		n.SessionID, n.Text = te.SessionID, text
		if err := h.deliver(ctx, n); err != nil {
			h.log.Warn("heartbeat not delivered", "agent", te.Agent, "gateway", n.Gateway, "chat_id", n.ChatID, "err", err)
		}
	})
}

// heartbeatAnswer returns what of a heartbeat's answer is delivered, and
// false when nothing is: an empty answer, or the marker alone or at its
// start or end with at most hbAckMax characters besides.
func heartbeatAnswer(answer string) (string, bool) {
	s := strings.TrimSpace(answer)
	rest, found := stripMarker(s)
	switch {
	case s == "":
		return "", false
	case !found:
		return s, true
	case len([]rune(rest)) <= hbAckMax:
		return "", false
	}
	return rest, true
}

// stripMarker removes the marker from the start or the end of s, with the
// emphasis and punctuation a model may wrap it in.
func stripMarker(s string) (string, bool) {
	const wrap = "*_`~\"'.,!:;-()[] \t\r\n"
	trimmed := strings.Trim(s, wrap)
	n := len(HeartbeatOK)
	if len(trimmed) >= n && strings.EqualFold(trimmed[:n], HeartbeatOK) && !wordAt(trimmed, n) {
		return strings.TrimLeft(trimmed[n:], wrap), true
	}
	if len(trimmed) >= n && strings.EqualFold(trimmed[len(trimmed)-n:], HeartbeatOK) && !wordBefore(trimmed, len(trimmed)-n) {
		return strings.TrimRight(trimmed[:len(trimmed)-n], wrap), true
	}
	return s, false
}

// wordAt and wordBefore tell a marker that is part of a longer word
// (HEARTBEAT_OKAY) from one that stands alone.
func wordAt(s string, i int) bool { return i < len(s) && isWordByte(s[i]) }

func wordBefore(s string, i int) bool { return i > 0 && isWordByte(s[i-1]) }

func isWordByte(b byte) bool {
	return b == '_' || b < 0x80 && (unicode.IsLetter(rune(b)) || unicode.IsDigit(rune(b)))
}

// target is where an agent's heartbeat goes: its deliver_to (directly),
// else the chat it last answered through a gateway, for the notify
// settings to use.
func (h *heartbeats) target(ctx context.Context, agent string) hbNotice {
	n := hbNotice{Agent: agent}
	if spec, err := h.agents.Spec(agent); err == nil && spec.Heartbeat != nil && spec.Heartbeat.DeliverTo != nil {
		t := spec.Heartbeat.DeliverTo
		n.Gateway, n.ChatID, n.Direct = t.Gateway, t.ChatID, true
		return n
	}
	h.mu.Lock()
	c, ok := h.lastChat[agent]
	h.mu.Unlock()
	if !ok {
		c = h.findLastChat(ctx, agent)
	}
	n.Gateway, n.ChatID = c.gateway, c.chatID
	return n
}

// findLastChat looks through the sessions for the chat the agent last
// talked with through a gateway (after a restart, before it answered one
// again), and remembers it.
func (h *heartbeats) findLastChat(ctx context.Context, agent string) chatRef {
	infos, err := h.loop.Sessions(ctx)
	if err != nil {
		h.log.Warn("sessions not read to find the heartbeat's chat", "agent", agent, "err", err)
		return chatRef{}
	}
	var best runtime.SessionInfo
	for _, s := range infos {
		if s.Agent == agent && s.Gateway != "" && s.Gateway != agents.HeartbeatGateway && s.ChatID != "" &&
			h.isGateway(s.Gateway) && s.Updated.After(best.Updated) {
			best = s
		}
	}
	if best.ID == "" {
		return chatRef{}
	}
	c := chatRef{best.Gateway, best.ChatID}
	h.mu.Lock()
	if _, ok := h.lastChat[agent]; !ok {
		h.lastChat[agent] = c
	}
	h.mu.Unlock()
	return c
}

// deliverChat posts n to its chat's current session as a notice and has
// the gateway deliver it. As with notifications, a chat that never wrote
// to the bot (no session: starting one would route the chat to this
// agent) or whose session is another agent's (the notice would enter that
// agent's context) gets nothing. A notice with no chat is logged.
func (h *heartbeats) deliverChat(ctx context.Context, n hbNotice, cs *chats.Chats, follow func(ctx context.Context, gateway, sid, chat string) error) error {
	if n.Gateway == "" {
		h.log.Info("heartbeat has something to say but no chat to say it to; set spec.heartbeat.deliver_to",
			"agent", n.Agent, "session_id", n.SessionID, "text", n.Text)
		return nil
	}
	sid, agent, err := cs.Live(ctx, n.Gateway, n.ChatID)
	if errors.Is(err, chats.ErrNoChat) {
		return fmt.Errorf("%s chat %s has no session yet: a heartbeat goes only to a chat that has written to the bot", n.Gateway, n.ChatID)
	}
	if err != nil {
		return err
	}
	if agent != n.Agent {
		return fmt.Errorf("%s chat %s talks to agent %s, not %s: a heartbeat goes only to a chat of the agent's own (fix spec.heartbeat.deliver_to)",
			n.Gateway, n.ChatID, agent, n.Agent)
	}
	if _, err := h.loop.Notice(ctx, sid, runtime.Notice{Content: n.Text, Origin: agents.OriginHeartbeat}); err != nil {
		return err
	}
	if err := follow(ctx, n.Gateway, sid, n.ChatID); err != nil {
		h.log.Warn("heartbeat stored in the chat's session; its gateway delivers it when it can", "agent", n.Agent,
			"gateway", n.Gateway, "err", err)
	}
	return nil
}
