package telegram

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Approvals are inline buttons whose callback_data is "ap:D:CALLID" (D is
// o, a or d), which survives a restart; a call id too long for Telegram's
// 64 bytes gets a short key, "ak:D:N", mapped in memory.

const maxCallbackData = 64

// maxKeys bounds the in-memory key map (oldest first out).
const maxKeys = 256

type approvalRef struct{ sid, callID string }

// approvalKeys maps short keys to long call ids; the outbox goroutine's.
type approvalKeys struct {
	next  uint64
	m     map[uint64]approvalRef
	order []uint64
}

func (k *approvalKeys) add(ref approvalRef) string {
	if k.m == nil {
		k.m = map[uint64]approvalRef{}
	}
	k.next++
	k.m[k.next] = ref
	k.order = append(k.order, k.next)
	if len(k.order) > maxKeys {
		delete(k.m, k.order[0])
		k.order = k.order[1:]
	}
	return strconv.FormatUint(k.next, 10)
}

// decisionDef is one button: its code in callback_data, the decision, its
// label and what the request shows once answered.
type decisionDef struct{ code, decision, button, done string }

var decisions = []decisionDef{
	{"o", runtime.AllowOnce, "Allow once", "Allowed once"},
	{"a", runtime.AllowAlways, "Always", "Allowed for this conversation"},
	{"d", runtime.DenyCall, "Deny", "Denied"},
}

// askApproval sends the approval request with its three buttons.
func (w *watcher) askApproval(ctx context.Context, e runtime.Event) error {
	prefix, id := "ap:", e.CallID
	if len("ap:o:"+id) > maxCallbackData {
		key, ok := w.o.key(approvalRef{sid: w.sid, callID: e.CallID})
		if !ok {
			return errors.New("telegram: the gateway is stopping")
		}
		prefix, id = "ak:", key
	}
	row := make([]InlineButton, 0, len(decisions))
	for _, d := range decisions {
		row = append(row, InlineButton{Text: d.button, CallbackData: prefix + d.code + ":" + id})
	}
	subject := e.Content
	if len(subject) > 3000 {
		subject = subject[:3000] + "…"
	}
	text := "🔐 The agent wants to use <b>" + EscapeHTML(e.ToolName) + "</b>"
	plain := "🔐 The agent wants to use " + e.ToolName
	if strings.TrimSpace(subject) != "" {
		text += ":\n<pre>" + EscapeHTML(subject) + "</pre>"
		plain += ":\n" + subject
	}
	_, err := w.bot.post(ctx, Text{ChatID: w.chat, Text: text, ParseMode: "HTML", Keyboard: &InlineKeyboard{Rows: [][]InlineButton{row}}}, plain)
	return err
}

// onCallback answers a button press: the decision goes to the loop, the
// press is acknowledged, and the request's message shows the outcome
// instead of its buttons.
func (g *poller) onCallback(ctx context.Context, q *CallbackQuery) {
	ack := func(text string) {
		cctx, cancel := g.bot.callCtx(ctx)
		defer cancel()
		if err := g.bot.api.AnswerCallbackQuery(cctx, q.ID, text); err != nil {
			g.bot.log.Warn("telegram: cannot answer a button press", "err", err)
		}
	}
	if !g.allowed(q.From.ID) {
		ack("Sorry, you are not allowed to answer this.")
		return
	}
	d, refs, ok := g.parseCallback(q)
	if !ok {
		ack("This button is no longer valid.")
		return
	}
	err := runtime.ErrNoApproval
	for _, r := range refs {
		if err = g.o.Loop.Approve(ctx, r.sid, r.callID, d.decision); !errors.Is(err, runtime.ErrNoApproval) && !errors.Is(err, runtime.ErrSessionNotFound) {
			break
		}
	}
	outcome := d.done
	switch {
	case errors.Is(err, runtime.ErrNoApproval) || errors.Is(err, runtime.ErrSessionNotFound):
		outcome = "No longer pending"
	case err != nil:
		g.bot.log.Error("telegram: cannot record an approval", "err", err)
		ack("Sorry, that did not work: " + err.Error())
		return
	}
	ack(outcome)
	m := q.Message
	text := EscapeHTML(m.Text) + "\n\n<b>" + outcome + "</b>"
	if err := g.bot.edit(ctx, Text{ChatID: m.Chat.ID, MessageID: m.MessageID, Text: text, ParseMode: "HTML"}, m.Text+"\n\n"+outcome); err != nil {
		g.bot.log.Warn("telegram: cannot update an approval request", "err", err)
	}
}

// parseCallbackData splits a button's data into its kind (ap, ak), the
// decision and the call id or key.
func parseCallbackData(data string) (kind string, d decisionDef, id string, ok bool) {
	kind, rest, _ := strings.Cut(data, ":")
	code, id, found := strings.Cut(rest, ":")
	if !found || id == "" || (kind != "ap" && kind != "ak") {
		return "", d, "", false
	}
	for _, x := range decisions {
		if x.code == code {
			return kind, x, id, true
		}
	}
	return "", d, "", false
}

// parseCallback reads a button press: the decision, and the sessions the
// call may belong to (the chat's current one, then any other this gateway
// follows in that chat).
func (g *poller) parseCallback(q *CallbackQuery) (decisionDef, []approvalRef, bool) {
	kind, d, id, ok := parseCallbackData(q.Data)
	if !ok || q.Message == nil {
		return d, nil, false
	}
	if kind == "ak" {
		n, _ := strconv.ParseUint(id, 10, 64)
		r, found := g.out.lookup(n)
		return d, []approvalRef{r}, found
	}
	refs := g.out.refs(q.Message.Chat.ID, id)
	return d, refs, len(refs) > 0
}
