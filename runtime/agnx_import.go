package runtime

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
)

// agnxIn is a line of Agnx's events.jsonl, or of agnx-lite's own export,
// read leniently: the names of both for a tool call's fields, agnx-lite's
// turn_end status, and Agnx's legacy types.
type agnxIn struct {
	Seq        uint64          `json:"seq"`
	Timestamp  string          `json:"timestamp"`
	Type       string          `json:"type"`
	Agent      string          `json:"agent"`
	Disc       string          `json:"on_disconnect"`
	Gateway    string          `json:"gateway"`
	ChatID     string          `json:"gateway_chat_id"`
	Principal  string          `json:"principal"`
	Content    string          `json:"content"`
	SenderID   string          `json:"sender_id"`
	SenderName string          `json:"sender_name"`
	ToolCalls  []agnxCallIn    `json:"tool_calls"`
	Usage      *agnxUsage      `json:"usage"`
	CallID     string          `json:"call_id"`
	CallIDs    []string        `json:"call_ids"`
	ToolName   string          `json:"tool_name"`
	Arguments  json.RawMessage `json:"arguments"`
	Result     *struct {
		Success bool            `json:"success"`
		Content string          `json:"content"`
		Details json.RawMessage `json:"details"`
	} `json:"result"`
	Command  string `json:"command"`
	Decision string `json:"decision"`
	To       string `json:"to"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Reason   string `json:"reason"`
	Status   string `json:"status"`
}

type agnxCallIn struct {
	CallID    string          `json:"call_id"`
	ID        string          `json:"id"`
	ToolName  string          `json:"tool_name"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// DecodeAgnxLine reads one line of an events.jsonl written by Agnx (legacy
// types included) or by agnx-lite's session export. ok is false for a line
// that cannot be read: it does not parse, lacks what its type needs, or
// has an unknown type (Agnx's own reader skips such lines too). A type
// that changes nothing agnx-lite keeps (silent_message, a status_change
// other than to completed) gives no events.
func DecodeAgnxLine(data []byte) (seq uint64, out []Event, ok bool) {
	seq, out = decodeAgnxLine(data)
	if out == nil {
		return 0, nil, false
	}
	return seq, out[:len(out):len(out)], true
}

// ignored is decodeAgnxLine's answer for a line read and left out.
var ignored = []Event{}

func decodeAgnxLine(data []byte) (seq uint64, out []Event) {
	var l agnxIn
	if json.Unmarshal(data, &l) != nil {
		return 0, nil
	}
	e := Event{Type: EventType(l.Type)}
	e.Time, _ = time.Parse(time.RFC3339Nano, l.Timestamp)
	switch l.Type {
	case "session_start":
		if !agents.ValidName(l.Agent) {
			return 0, nil
		}
		e.Agent, e.Gateway, e.ChatID = l.Agent, l.Gateway, l.ChatID
		e.Principal = parsePrincipal(l.Principal)
		if d := agents.OnDisconnect(l.Disc); d == agents.OnDisconnectPause || d == agents.OnDisconnectContinue {
			e.OnDisconnect = d
		}
	case "user_message":
		e.Content, e.SenderID, e.SenderName = l.Content, l.SenderID, l.SenderName
	case "assistant_response", "assistant_message":
		e.Type, e.Agent, e.Content = EvAssistant, l.Agent, l.Content
		for _, c := range l.ToolCalls {
			id, name := first(c.CallID, c.ID), first(c.ToolName, c.Name)
			if id == "" || name == "" {
				return 0, nil
			}
			e.ToolCalls = append(e.ToolCalls, ToolCall{ID: id, Name: name, Arguments: argumentsOf(c.Arguments)})
		}
		if u := l.Usage; u != nil && u.Prompt >= 0 && u.Completion >= 0 {
			e.Usage = Usage{PromptTokens: u.Prompt, CompletionTokens: u.Completion}
		}
	case "tool_call":
		if l.CallID == "" || l.ToolName == "" {
			return 0, nil
		}
		e.CallID, e.ToolName, e.Arguments = l.CallID, l.ToolName, argumentsOf(l.Arguments)
	case "tool_result":
		if l.CallID == "" || l.Result == nil {
			return 0, nil
		}
		e.CallID, e.ToolName, e.Success, e.Content = l.CallID, l.ToolName, l.Result.Success, l.Result.Content
		if len(l.Result.Details) > 0 && string(l.Result.Details) != "null" {
			e.Details = l.Result.Details
		}
	case "tools_skipped":
		out = ignored
		for _, id := range l.CallIDs {
			out = append(out, Event{Type: EvToolResult, Time: e.Time, CallID: id,
				Content: "the tool call was skipped: " + l.Reason})
		}
		return l.Seq, out
	case "approval_required":
		e.CallID, e.ToolName, e.Content = l.CallID, l.ToolName, first(l.Command, l.Content)
	case "approval_decision":
		if l.Decision != AllowOnce && l.Decision != AllowAlways && l.Decision != DenyCall {
			return 0, nil
		}
		e.CallID, e.Decision, e.Reason = l.CallID, l.Decision, l.Reason
	case "error":
		e.Code, e.Content = l.Code, first(l.Message, l.Content)
	case "status_change":
		if l.To != string(SessionCompleted) {
			return l.Seq, ignored
		}
		e.Type, e.Reason = EvSessionEnd, "completed"
	case "session_end":
		e.Reason = l.Reason
	case "turn_end":
		e.Reason = l.Status
		if u := l.Usage; u != nil && u.Prompt >= 0 && u.Completion >= 0 {
			e.Usage = Usage{PromptTokens: u.Prompt, CompletionTokens: u.Completion}
		}
	case "silent_message", "token":
		return l.Seq, ignored // not part of the conversation
	default:
		return 0, nil // unknown: Agnx skips it too
	}
	return l.Seq, []Event{e}
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// argumentsOf is a tool call's arguments as agnx-lite keeps them: the
// text of a JSON string, else the JSON itself.
func argumentsOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// AgnxTurns makes a stream read with DecodeAgnxLine one agnx-lite can
// replay. Agnx's logs have no turn_end: a turn is closed before the next
// user message (failed if it met an error) and after a last answer that
// asks for no tools. Legacy tool_call events join the assistant message
// before them, or get one of their own. A stream that has turn_end events
// (agnx-lite's own) keeps its turns.
func AgnxTurns(in []Event) []Event {
	lite := false
	for i := range in {
		lite = lite || in[i].Type == EvTurnEnd
	}
	out := make([]Event, 0, len(in)+len(in)/4)
	open, failed, agent, asst := false, false, "", -1
	closeTurn := func(t time.Time) {
		if open && !lite {
			reason := TurnCompleted
			if failed {
				reason = TurnFailed
			}
			out = append(out, Event{Type: EvTurnEnd, Reason: reason, Time: t})
		}
		open, failed = false, false
	}
	for _, e := range in {
		switch e.Type {
		case EvSessionStart:
			agent = e.Agent
		case EvUserMessage:
			closeTurn(e.Time)
			open = true
		case EvError:
			failed = true
		case EvSessionEnd:
			closeTurn(e.Time)
		case EvTurnEnd:
			open, failed = false, false
		case EvToolCall:
			call := ToolCall{ID: e.CallID, Name: e.ToolName, Arguments: e.Arguments}
			switch {
			case asst >= 0 && hasCall(out[asst].ToolCalls, e.CallID):
			case asst >= 0:
				out[asst].ToolCalls = append(out[asst].ToolCalls, call)
			case !lite:
				asst = len(out)
				out = append(out, Event{Type: EvAssistant, Agent: agent, Time: e.Time, ToolCalls: []ToolCall{call}})
			}
		case EvAssistant, EvToolResult, EvApprovalRequired, EvApprovalDecision,
			EvSilentMessage, EvHistoryCompaction, EvToken, EvToolProgress:
			// They change no turn.
		}
		switch e.Type {
		case EvAssistant:
			asst = len(out)
		case EvToolCall:
			// The calls after an assistant_response join it (above): it stays
			// the one they attach to.
		case EvSessionStart, EvUserMessage, EvToolResult, EvApprovalRequired, EvApprovalDecision,
			EvError, EvTurnEnd, EvSessionEnd, EvSilentMessage, EvHistoryCompaction, EvToken, EvToolProgress:
			// Any other line ends the assistant_response calls attach to.
			fallthrough
		default:
			asst = -1
		}
		out = append(out, e)
	}
	if n := len(out); n > 0 && out[n-1].Type == EvAssistant && len(out[n-1].ToolCalls) == 0 {
		closeTurn(out[n-1].Time)
	}
	return out
}

func hasCall(calls []ToolCall, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}

// event maps a state.json conversation message to the event that
// brings it back; ok is false for the roles agnx-lite does not keep.
func (m *agnxStateMessage) event(t time.Time, agent string) (Event, bool) {
	switch strings.ToLower(m.Role) {
	case "user", "steering":
		return Event{Type: EvUserMessage, Content: m.Content, Time: t}, true
	case "assistant":
		e := Event{Type: EvAssistant, Agent: agent, Content: m.Content, Time: t}
		for _, c := range m.ToolCalls {
			e.ToolCalls = append(e.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		return e, true
	case "tool":
		return Event{Type: EvToolResult, CallID: m.ToolCallID, Success: true, Content: m.Content, Time: t}, true
	}
	return Event{}, false
}
