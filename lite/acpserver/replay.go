package acpserver

import (
	"context"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// replay sends a stored session's conversation to a client loading it:
// the messages as user_message_chunk and agent_message_chunk, the tool
// calls as tool_call and tool_call_update.
type replay struct {
	s   *server
	ctx context.Context
	sid acp.SessionId
	n   int
}

func (r *replay) event(e runtime.Event) error {
	var u acp.SessionUpdate
	switch e.Type {
	case runtime.EvUserMessage:
		if e.Steering {
			return nil // a hook's note, not the user's
		}
		u = acp.UpdateUserMessageText(e.Content)
	case runtime.EvAssistant:
		if e.Content == "" {
			return nil
		}
		u = acp.UpdateAgentMessageText(e.Content)
	case runtime.EvToolCall:
		u = startCall(&e)
	case runtime.EvToolResult:
		u = resultUpdate(&e)
	case runtime.EvSessionStart, runtime.EvSessionEnd, runtime.EvApprovalRequired, runtime.EvApprovalDecision,
		runtime.EvError, runtime.EvTurnEnd, runtime.EvHistoryCompaction, runtime.EvSilentMessage,
		runtime.EvToken, runtime.EvToolProgress:
		// session_start and session_end, approvals, errors, turn ends,
		// compactions and silent messages are not part of the
		// conversation an editor shows; tokens and progress are not in
		// the log.
		fallthrough
	default:
		return nil
	}
	r.n++
	return r.s.update(r.ctx, r.sid, u)
}
