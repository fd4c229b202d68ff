package runtime

import (
	"fmt"
	"strconv"
	"time"

	"github.com/valyala/fastjson"
)

// EventType names an event. Durable types follow Agnx's session events;
// turn_end is an agnx-lite extension that closes every turn.
type EventType string

// Durable event types, stored in the session's log.
const (
	EvSessionStart EventType = "session_start"
	EvUserMessage  EventType = "user_message"
	EvAssistant    EventType = "assistant_response"
	EvToolCall     EventType = "tool_call"
	EvToolResult   EventType = "tool_result"
	EvError        EventType = "error"
	EvTurnEnd      EventType = "turn_end"
	EvSessionEnd   EventType = "session_end"
	// EvApprovalRequired: a tool call waits for a user's yes or no;
	// Content is what it would do (the command, the path).
	EvApprovalRequired EventType = "approval_required"
	// EvApprovalDecision answers one; Decision is allow_once, allow_always
	// or deny, Reason who decided (user, timeout).
	EvApprovalDecision EventType = "approval_decision"
)

// Approval decisions.
const (
	AllowOnce   = "allow_once"
	AllowAlways = "allow_always"
	DenyCall    = "deny"
)

// Ephemeral event types: sent to live subscribers, never stored, Seq 0.
const (
	EvToken EventType = "token"
)

// Turn outcomes, the Reason of a turn_end event.
const (
	TurnCompleted   = "completed"
	TurnFailed      = "failed"
	TurnCancelled   = "cancelled"
	TurnInterrupted = "interrupted"
	// TurnPaused ends a turn whose client went away when the agent's
	// on_disconnect is pause: it stops at the next safe point, and the
	// next message goes on from there.
	TurnPaused = "paused"
)

// Event is one entry of a session's log, or an ephemeral token for live
// subscribers. Only the fields of its Type are set.
type Event struct {
	Seq  uint64
	Type EventType
	Time time.Time

	// session_start
	Agent        string
	OnDisconnect string
	Gateway      string
	ChatID       string

	// user_message, assistant_response, tool_result, error, token
	Content    string
	SenderID   string
	SenderName string
	ToolCalls  []ToolCall
	Usage      Usage

	// tool_call, tool_result
	CallID    string
	ToolName  string
	Arguments string
	Success   bool

	// error: Code; turn_end: Reason is the outcome, Usage the turn's
	// tokens; session_end: the reason.
	Code   string
	Reason string

	// approval_decision
	Decision string
	// tool_result: structured data for clients (JSON), never sent to the
	// model.
	Details []byte
}

// Durable reports whether the event belongs in the log.
func (e *Event) Durable() bool { return e.Type != EvToken }

// AppendJSON appends the event in Agnx's JSON form.
func (e *Event) AppendJSON(dst []byte) []byte {
	o := newObject(dst)
	o.int("seq", int64(e.Seq))
	o.str("timestamp", e.Time.UTC().Format(time.RFC3339Nano))
	o.str("type", string(e.Type))
	switch e.Type {
	case EvSessionStart:
		o.str("agent", e.Agent)
		o.strOpt("on_disconnect", e.OnDisconnect)
		o.strOpt("gateway", e.Gateway)
		o.strOpt("gateway_chat_id", e.ChatID)
	case EvUserMessage:
		o.str("content", e.Content)
		o.strOpt("sender_id", e.SenderID)
		o.strOpt("sender_name", e.SenderName)
	case EvAssistant:
		o.strOpt("agent", e.Agent)
		o.str("content", e.Content)
		o.key("tool_calls")
		o.b = appendToolCalls(o.b, e.ToolCalls)
		if e.Usage != (Usage{}) {
			o.key("usage")
			o.b = appendUsage(o.b, e.Usage)
		}
	case EvToolCall:
		o.str("call_id", e.CallID)
		o.str("tool_name", e.ToolName)
		o.key("arguments")
		o.b = appendArguments(o.b, e.Arguments)
	case EvToolResult:
		o.str("call_id", e.CallID)
		o.strOpt("tool_name", e.ToolName)
		r := newObject(nil)
		r.bool("success", e.Success)
		r.str("content", e.Content)
		if len(e.Details) > 0 && fastjson.ValidateBytes(e.Details) == nil {
			r.raw("details", e.Details)
		}
		o.raw("result", r.end())
	case EvError:
		o.str("code", e.Code)
		o.str("message", e.Content)
	case EvApprovalRequired:
		o.str("call_id", e.CallID)
		o.str("tool_name", e.ToolName)
		o.str("command", e.Content)
	case EvApprovalDecision:
		o.str("call_id", e.CallID)
		o.str("decision", e.Decision)
		o.strOpt("reason", e.Reason)
	case EvTurnEnd:
		o.str("status", e.Reason)
		if e.Usage != (Usage{}) {
			o.key("usage")
			o.b = appendUsage(o.b, e.Usage)
		}
	case EvSessionEnd:
		o.str("reason", e.Reason)
	case EvToken:
		o.str("content", e.Content)
	}
	return o.end()
}

func appendToolCalls(dst []byte, calls []ToolCall) []byte {
	dst = append(dst, '[')
	for i, c := range calls {
		if i > 0 {
			dst = append(dst, ',')
		}
		o := newObject(dst)
		o.str("id", c.ID)
		o.str("name", c.Name)
		o.key("arguments")
		o.b = appendArguments(o.b, c.Arguments)
		dst = o.end()
	}
	return append(dst, ']')
}

// appendArguments stores tool arguments as a JSON value when they are valid
// JSON, else as a string, so a model's broken arguments are kept verbatim.
func appendArguments(dst []byte, args string) []byte {
	if args != "" && fastjson.Validate(args) == nil {
		return append(dst, args...)
	}
	return AppendJSONString(dst, args)
}

func appendUsage(dst []byte, u Usage) []byte {
	o := newObject(dst)
	o.int("prompt_tokens", int64(u.PromptTokens))
	o.int("completion_tokens", int64(u.CompletionTokens))
	o.int("total_tokens", int64(u.Total()))
	return o.end()
}

// DecodeEvent parses an event written by AppendJSON. p is reused between
// calls by the caller; the returned Event does not refer to data or p.
func DecodeEvent(p *fastjson.Parser, data []byte) (Event, error) {
	v, err := p.ParseBytes(data)
	if err != nil {
		return Event{}, fmt.Errorf("decode event: %w", err)
	}
	e := Event{
		Seq:  v.GetUint64("seq"),
		Type: EventType(v.GetStringBytes("type")),
	}
	if ts := v.GetStringBytes("timestamp"); len(ts) > 0 {
		e.Time, _ = time.Parse(time.RFC3339Nano, string(ts))
	}
	str := func(keys ...string) string { return string(v.GetStringBytes(keys...)) }
	switch e.Type {
	case EvSessionStart:
		e.Agent, e.OnDisconnect = str("agent"), str("on_disconnect")
		e.Gateway, e.ChatID = str("gateway"), str("gateway_chat_id")
	case EvUserMessage:
		e.Content, e.SenderID, e.SenderName = str("content"), str("sender_id"), str("sender_name")
	case EvAssistant:
		e.Agent, e.Content = str("agent"), str("content")
		for _, c := range v.GetArray("tool_calls") {
			e.ToolCalls = append(e.ToolCalls, ToolCall{
				ID:        string(c.GetStringBytes("id")),
				Name:      string(c.GetStringBytes("name")),
				Arguments: argumentsText(c.Get("arguments")),
			})
		}
		if u := v.Get("usage"); u != nil {
			e.Usage = Usage{u.GetInt("prompt_tokens"), u.GetInt("completion_tokens")}
		}
	case EvToolCall:
		e.CallID, e.ToolName = str("call_id"), str("tool_name")
		e.Arguments = argumentsText(v.Get("arguments"))
	case EvToolResult:
		e.CallID, e.ToolName = str("call_id"), str("tool_name")
		e.Success = v.GetBool("result", "success")
		e.Content = str("result", "content")
		if d := v.Get("result", "details"); d != nil {
			e.Details = d.MarshalTo(nil)
		}
	case EvError:
		e.Code, e.Content = str("code"), str("message")
	case EvApprovalRequired:
		e.CallID, e.ToolName, e.Content = str("call_id"), str("tool_name"), str("command")
	case EvApprovalDecision:
		e.CallID, e.Decision, e.Reason = str("call_id"), str("decision"), str("reason")
	case EvTurnEnd:
		e.Reason = str("status")
		if u := v.Get("usage"); u != nil {
			e.Usage = Usage{u.GetInt("prompt_tokens"), u.GetInt("completion_tokens")}
		}
	case EvSessionEnd:
		e.Reason = str("reason")
	case EvToken:
		e.Content = str("content")
	default:
		return e, fmt.Errorf("decode event %d: unknown type %q", e.Seq, e.Type)
	}
	return e, nil
}

func argumentsText(v *fastjson.Value) string {
	if v == nil {
		return ""
	}
	if v.Type() == fastjson.TypeString {
		return string(v.GetStringBytes())
	}
	return string(v.MarshalTo(nil))
}

// String is a short form for logs and tests.
func (e *Event) String() string {
	return strconv.FormatUint(e.Seq, 10) + ":" + string(e.Type)
}
