package acpserver

import (
	"context"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxAsks bounds the permission requests one turn keeps open at once.
const maxAsks = 8

// turn maps one turn's events to session updates. event is called from
// one goroutine; the permission requests run on their own.
type turn struct {
	s   *server
	sid acp.SessionId
	ctx context.Context
	// streamed is the answer text sent as tokens in this model round,
	// to reconcile with its final message (tokens are lossy).
	streamed strings.Builder
	errs     []runtime.Event
	end      string // the turn_end's reason, once seen
	// asks cancels the permission request open for a call id; calls are
	// the tool calls started in the turn.
	asks  map[string]context.CancelFunc
	calls map[string]string // call id → tool name
	wg    sync.WaitGroup
}

func (t *turn) event(e runtime.Event) error {
	switch e.Type {
	case runtime.EvToken:
		t.streamed.WriteString(e.Content)
		return t.send(acp.UpdateAgentMessageText(e.Content))
	case runtime.EvAssistant:
		return t.answer(&e)
	case runtime.EvToolCall:
		if t.calls == nil {
			t.calls = make(map[string]string)
		}
		t.calls[e.CallID] = e.ToolName
		return t.send(startCall(&e))
	case runtime.EvToolResult:
		return t.send(resultUpdate(&e))
	case runtime.EvToolProgress:
		return t.send(acp.UpdateToolCall(acp.ToolCallId(e.CallID), acp.WithUpdateStatus(acp.ToolCallStatusInProgress),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(cut(e.Content, 2<<10)))})))
	case runtime.EvApprovalRequired:
		return t.ask(&e)
	case runtime.EvApprovalDecision:
		return t.decided(&e)
	case runtime.EvError:
		t.errs = append(t.errs, e)
	case runtime.EvTurnEnd:
		t.end = e.Reason
	case runtime.EvUserMessage, runtime.EvSilentMessage, runtime.EvHistoryCompaction,
		runtime.EvSessionStart, runtime.EvSessionEnd:
		// user_message (the prompt itself), silent_message, compaction,
		// session_start/end: nothing an editor shows during a turn.
	}
	return nil
}

func (t *turn) send(u acp.SessionUpdate) error { return t.s.update(t.ctx, t.sid, u) }

// answer sends what the tokens did not of a model round's final message.
func (t *turn) answer(e *runtime.Event) error {
	if e.Origin != "" { // a notice, not the answer being streamed
		return t.send(acp.UpdateAgentMessageText(e.Content))
	}
	shown := t.streamed.String()
	t.streamed.Reset()
	rest, ok := strings.CutPrefix(e.Content, shown)
	if !ok && shown != "" {
		return nil // the tokens were not this message's: it was shown differently, leave it
	}
	if rest == "" {
		return nil
	}
	return t.send(acp.UpdateAgentMessageText(rest))
}

// ask asks the client about a call the agent's policy asks about. A
// runtime.Ask from inside a running call has id "<call>.<n>": it is shown
// as a call of its own first.
func (t *turn) ask(e *runtime.Event) error {
	if len(t.asks) >= maxAsks {
		t.s.log.Warn("acp permission request not sent: too many open", "session", string(t.sid), "call", e.CallID)
		return nil
	}
	title := callTitle(e.ToolName, e.Content)
	if _, known := t.calls[e.CallID]; !known {
		if err := t.send(acp.StartToolCall(acp.ToolCallId(e.CallID), title, acp.WithStartKind(toolKind(e.ToolName)),
			acp.WithStartStatus(acp.ToolCallStatusPending), acp.WithStartRawInput(e.Content))); err != nil {
			return err
		}
	}
	if t.asks == nil {
		t.asks = make(map[string]context.CancelFunc)
	}
	ctx, cancel := context.WithCancel(t.ctx)
	t.asks[e.CallID] = cancel
	req := acp.RequestPermissionRequest{
		SessionId: t.sid,
		ToolCall: acp.ToolCallUpdate{ToolCallId: acp.ToolCallId(e.CallID), Title: &title,
			Kind: acp.Ptr(toolKind(e.ToolName)), Status: acp.Ptr(acp.ToolCallStatusPending)},
		Options: permissionOptions,
	}
	t.wg.Add(1)
	go t.s.permission(ctx, cancel, &t.wg, string(t.sid), e.CallID, req)
	return nil
}

// The options offered, their ids our decisions.
var permissionOptions = []acp.PermissionOption{
	{Kind: acp.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: runtime.AllowOnce},
	{Kind: acp.PermissionOptionKindAllowAlways, Name: "Always allow (this agent)", OptionId: runtime.AllowAlways},
	{Kind: acp.PermissionOptionKindRejectOnce, Name: "Deny", OptionId: runtime.DenyCall},
}

// decision maps the client's answer to ours: a cancelled request (the
// client cancels the turn) or an unknown option denies.
func decision(o acp.RequestPermissionOutcome) string {
	if o.Selected != nil {
		switch d := string(o.Selected.OptionId); d {
		case runtime.AllowOnce, runtime.AllowAlways:
			return d
		}
	}
	return runtime.DenyCall
}

// permission asks the client and answers the call. ctx ends when the call
// was decided elsewhere (a timeout, another client) or the turn ended.
func (s *server) permission(ctx context.Context, cancel context.CancelFunc, wg *sync.WaitGroup, sid, callID string, req acp.RequestPermissionRequest) {
	defer wg.Done()
	defer cancel()
	resp, err := s.conn.RequestPermission(ctx, req)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("acp permission request failed", "session", sid, "call", callID, "err", err)
		}
		return
	}
	d := decision(resp.Outcome)
	actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer acancel()
	if err := s.b.Approve(actx, sid, callID, d); err != nil {
		// Decided meanwhile by a timeout or another client: its decision stands.
		s.log.Info("acp permission answer not taken", "session", sid, "call", callID, "err", err)
	}
}

// decided ends the permission request of a call decided, here or
// elsewhere; a question asked from inside a call ends with it.
func (t *turn) decided(e *runtime.Event) error {
	if cancel := t.asks[e.CallID]; cancel != nil {
		cancel()
		delete(t.asks, e.CallID)
	}
	if _, known := t.calls[e.CallID]; known {
		if e.Decision == runtime.DenyCall {
			return nil // its failed tool_result follows
		}
		// The request showed it pending: it runs now.
		return t.send(acp.UpdateToolCall(acp.ToolCallId(e.CallID), acp.WithUpdateStatus(acp.ToolCallStatusInProgress)))
	}
	status := acp.ToolCallStatusCompleted
	if e.Decision == runtime.DenyCall {
		status = acp.ToolCallStatusFailed
	}
	return t.send(acp.UpdateToolCall(acp.ToolCallId(e.CallID), acp.WithUpdateStatus(status),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(e.Decision + " (" + e.Reason + ")"))})))
}

// close ends the permission requests still open and waits for them.
func (t *turn) close() {
	for _, cancel := range t.asks {
		cancel()
	}
	t.wg.Wait()
}
