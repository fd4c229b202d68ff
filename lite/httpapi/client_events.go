package httpapi

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/sse"
)

// sseData holds the fields of every event's data (see encodeSSE).
type sseData struct {
	Content   string          `json:"content"`
	SenderID  string          `json:"sender_id"`
	ToolCalls []toolCallJSON  `json:"tool_calls"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Success   bool            `json:"success"`
	Code      string          `json:"code"`
	Message   string          `json:"message"`
	Status    string          `json:"status"`
	Usage     usageJSON       `json:"usage"`
	Details   json.RawMessage `json:"details"`
	Command   string          `json:"command"`
	ToolName  string          `json:"tool_name"`
	Decision  string          `json:"decision"`
	Reason    string          `json:"reason"`
	Origin    string          `json:"origin"`
}

// decodeSSE maps an SSE event of the API back to the runtime event it was
// made from; Seq is its id. known is false for events the client does not
// pass on: start, keep-alive-like events, and names a newer server may add
// (their id still counts as seen). A malformed id or data is an error: the
// stream is not an agnx-lite one.
func decodeSSE(ev sse.Event) (e runtime.Event, known bool, err error) {
	if ev.ID != "" {
		if e.Seq, err = strconv.ParseUint(ev.ID, 10, 64); err != nil {
			return e, false, fmt.Errorf("event stream: id %q is not a seq", ev.ID)
		}
	}
	var d sseData
	switch ev.Name {
	case "token", "user_message", "message", "tool_call", "tool_result", "error", "done",
		"approval_required", "approval_decision", "tool_progress":
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return e, false, fmt.Errorf("event stream: %s event: %w", ev.Name, err)
		}
	case "cancelled":
		e.Type, e.Reason = runtime.EvTurnEnd, runtime.TurnCancelled
		return e, true, nil
	default:
		// start {} carries the user message's seq.
		return e, false, nil
	}
	switch ev.Name {
	case "token":
		e.Type, e.Content = runtime.EvToken, d.Content
	case "user_message":
		e.Type, e.Content, e.SenderID = runtime.EvUserMessage, d.Content, d.SenderID
	case "message":
		e.Type, e.Content, e.Origin = runtime.EvAssistant, d.Content, d.Origin
		for _, c := range d.ToolCalls {
			e.ToolCalls = append(e.ToolCalls, runtime.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	case "tool_call":
		e.Type, e.CallID, e.ToolName, e.Arguments = runtime.EvToolCall, d.CallID, d.Name, d.Arguments
	case "tool_result":
		e.Type, e.CallID, e.Content, e.Success = runtime.EvToolResult, d.CallID, d.Content, d.Success
		if len(d.Details) > 0 {
			e.Details = d.Details
		}
	case "approval_required":
		e.Type, e.CallID, e.Content, e.ToolName = runtime.EvApprovalRequired, d.CallID, d.Command, d.ToolName
	case "approval_decision":
		e.Type, e.CallID, e.Decision, e.Reason = runtime.EvApprovalDecision, d.CallID, d.Decision, d.Reason
	case "tool_progress":
		e.Type, e.CallID, e.ToolName, e.Content = runtime.EvToolProgress, d.CallID, d.ToolName, d.Content
	case "error":
		e.Type, e.Code, e.Content = runtime.EvError, d.Code, d.Message
	case "done":
		e.Type, e.Reason = runtime.EvTurnEnd, d.Status
		if e.Reason == "" {
			e.Reason = runtime.TurnCompleted // Agnx's done has no status
		}
		e.Usage = runtime.Usage{PromptTokens: d.Usage.Prompt, CompletionTokens: d.Usage.Completion}
	}
	return e, true, nil
}
