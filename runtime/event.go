package runtime

import (
	"fmt"
	"strconv"
	"time"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
)

// EventType names an event. Durable types follow Agnx's session events;
// turn_end is an agnx-lite extension that closes every turn. Every type is
// listed, with what it means, in EventTypes (event_types.go).
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
	// EvSilentMessage is a group message kept out of the conversation: the
	// model sees recent ones only as background when it is next addressed.
	EvSilentMessage EventType = "silent_message"
	// EvApprovalRequired: a tool call waits for a user's yes or no;
	// Content is what it would do (the command, the path).
	EvApprovalRequired EventType = "approval_required"
	// EvApprovalDecision answers one; Decision is allow_once, allow_always
	// or deny, Reason who decided (user, timeout).
	EvApprovalDecision EventType = "approval_decision"
	// EvHistoryCompaction moves the start of the context window: the
	// messages before Compaction.Upto are no longer sent to the model,
	// Content (a summary the model wrote, or "" for a plain trim) stands
	// for them. They stay in the log.
	EvHistoryCompaction EventType = "history_compaction"
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
	// EvToolProgress says what a long tool call is doing (Progress):
	// CallID, ToolName, Content.
	EvToolProgress EventType = "tool_progress"
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
	OnDisconnect agents.OnDisconnect
	Gateway      string
	ChatID       string
	// Spawn links a subagent's session to its parent (JSON "spawn").
	Spawn *Spawn
	// Principal is who the session speaks for (JSON "principal", a lite
	// extension; see principal.go). Zero in sessions stored before it.
	Principal agents.Principal

	// user_message, assistant_response, tool_result, error, token
	Content    string
	SenderID   string
	SenderName string
	ToolCalls  []ToolCall
	Usage      Usage
	// Thinking, on an assistant_response, are the signed reasoning blocks
	// the provider needs back (JSON "thinking", a lite extension).
	Thinking []ThinkingBlock
	// Passive marks a user_message stored without a turn (a group member
	// the agent listens to but does not answer); JSON "passive": true.
	Passive bool
	// Steering marks a user_message an after_tool hook added: it joins
	// the running turn after its round's results; JSON "steering": true.
	// Only the loop sets it (Input has no such field).
	Steering bool
	// Origin, on a user_message or an assistant_response, says what sent
	// it when no person or model turn did: "schedule", "heartbeat",
	// "webhook", "process" (JSON "origin", a lite extension).
	Origin string

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

	// history_compaction: what moved (Content is the summary, Usage the
	// summary call's tokens). A pointer: most events have none.
	Compaction *Compaction
}

// Durable reports whether the event belongs in the log (see EventTypes).
func (e *Event) Durable() bool { return durable(e.Type) }

// AppendJSON appends the event in Agnx's JSON form.
func (e *Event) AppendJSON(dst []byte) []byte {
	w := jsonw.Writer{B: dst}
	w.Object()
	w.Key("seq").Uint(e.Seq)
	w.Key("timestamp").String(e.Time.UTC().Format(time.RFC3339Nano))
	w.Key("type").String(string(e.Type))
	switch e.Type {
	case EvSessionStart:
		w.Key("agent").String(e.Agent)
		w.OptString("on_disconnect", string(e.OnDisconnect))
		w.OptString("gateway", e.Gateway)
		w.OptString("gateway_chat_id", e.ChatID)
		if e.Spawn != nil {
			e.Spawn.appendJSON(w.Key("spawn"))
		}
		if !e.Principal.IsZero() {
			w.Key("principal").String(e.Principal.String())
		}
	case EvUserMessage:
		w.Key("content").String(e.Content)
		w.OptString("sender_id", e.SenderID)
		w.OptString("sender_name", e.SenderName)
		if e.Passive {
			w.Key("passive").Bool(true)
		}
		if e.Steering {
			w.Key("steering").Bool(true)
		}
		w.OptString("origin", e.Origin)
	case EvSilentMessage:
		w.Key("content").String(e.Content)
		w.Key("sender_id").String(e.SenderID)
		w.OptString("sender_name", e.SenderName)
	case EvAssistant:
		w.OptString("agent", e.Agent)
		w.Key("content").String(e.Content)
		writeToolCalls(w.Key("tool_calls"), e.ToolCalls)
		if len(e.Thinking) > 0 {
			writeThinking(w.Key("thinking"), e.Thinking)
		}
		if e.Usage != (Usage{}) {
			writeUsage(w.Key("usage"), e.Usage)
		}
		w.OptString("origin", e.Origin)
	case EvToolCall:
		w.Key("call_id").String(e.CallID)
		w.Key("tool_name").String(e.ToolName)
		writeArguments(w.Key("arguments"), e.Arguments)
	case EvToolResult:
		w.Key("call_id").String(e.CallID)
		w.OptString("tool_name", e.ToolName)
		w.Key("result").Object()
		w.Key("success").Bool(e.Success)
		w.Key("content").String(e.Content)
		if len(e.Details) > 0 && fastjson.ValidateBytes(e.Details) == nil {
			w.Key("details").Raw(e.Details)
		}
		w.EndObject()
	case EvError:
		w.Key("code").String(e.Code)
		w.Key("message").String(e.Content)
	case EvApprovalRequired:
		w.Key("call_id").String(e.CallID)
		w.Key("tool_name").String(e.ToolName)
		w.Key("command").String(e.Content)
	case EvApprovalDecision:
		w.Key("call_id").String(e.CallID)
		w.Key("decision").String(e.Decision)
		w.OptString("reason", e.Reason)
	case EvTurnEnd:
		w.Key("status").String(e.Reason)
		if e.Usage != (Usage{}) {
			writeUsage(w.Key("usage"), e.Usage)
		}
	case EvSessionEnd:
		w.Key("reason").String(e.Reason)
	case EvHistoryCompaction:
		e.appendCompaction(&w)
	case EvToken:
		w.Key("content").String(e.Content)
	case EvToolProgress:
		w.Key("call_id").String(e.CallID)
		w.Key("tool_name").String(e.ToolName)
		w.Key("content").String(e.Content)
	}
	return w.EndObject().B
}

func writeToolCalls(w *jsonw.Writer, calls []ToolCall) {
	w.Array()
	for _, c := range calls {
		w.Object()
		w.Key("id").String(c.ID)
		w.Key("name").String(c.Name)
		writeArguments(w.Key("arguments"), c.Arguments)
		w.EndObject()
	}
	w.EndArray()
}

// writeArguments stores tool arguments as a JSON value when they are valid
// JSON, else as a string, so a model's broken arguments are kept verbatim.
func writeArguments(w *jsonw.Writer, args string) {
	if args != "" && fastjson.Validate(args) == nil {
		w.RawString(args)
		return
	}
	w.String(args)
}

func writeUsage(w *jsonw.Writer, u Usage) {
	w.Object()
	w.Key("prompt_tokens").Int(int64(u.PromptTokens))
	w.Key("completion_tokens").Int(int64(u.CompletionTokens))
	w.Key("total_tokens").Int(int64(u.Total()))
	if u.CacheReadTokens > 0 {
		w.Key("cache_read_tokens").Int(int64(u.CacheReadTokens))
	}
	if u.CacheWriteTokens > 0 {
		w.Key("cache_write_tokens").Int(int64(u.CacheWriteTokens))
	}
	if u.ReasoningTokens > 0 {
		w.Key("reasoning_tokens").Int(int64(u.ReasoningTokens))
	}
	w.EndObject()
}

func writeThinking(w *jsonw.Writer, blocks []ThinkingBlock) {
	w.Array()
	for _, b := range blocks {
		w.Object()
		w.OptString("text", b.Text)
		w.OptString("signature", b.Signature)
		w.OptString("redacted", b.Redacted)
		w.EndObject()
	}
	w.EndArray()
}

func readThinking(vs []*fastjson.Value) []ThinkingBlock {
	if len(vs) == 0 {
		return nil
	}
	out := make([]ThinkingBlock, len(vs))
	for i, v := range vs {
		out[i] = ThinkingBlock{
			Text:      string(v.GetStringBytes("text")),
			Signature: string(v.GetStringBytes("signature")),
			Redacted:  string(v.GetStringBytes("redacted")),
		}
	}
	return out
}

// readUsage reads what writeUsage wrote; v may be nil.
func readUsage(v *fastjson.Value) Usage {
	return Usage{
		PromptTokens:     v.GetInt("prompt_tokens"),
		CompletionTokens: v.GetInt("completion_tokens"),
		CacheReadTokens:  v.GetInt("cache_read_tokens"),
		CacheWriteTokens: v.GetInt("cache_write_tokens"),
		ReasoningTokens:  v.GetInt("reasoning_tokens"),
	}
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
		Type: eventType(v.GetStringBytes("type")),
	}
	if ts := v.GetStringBytes("timestamp"); len(ts) > 0 {
		e.Time, _ = time.Parse(time.RFC3339Nano, string(ts))
	}
	str := func(keys ...string) string { return string(v.GetStringBytes(keys...)) }
	switch e.Type {
	case EvSessionStart:
		e.Agent, e.OnDisconnect = str("agent"), agents.OnDisconnect(str("on_disconnect"))
		e.Gateway, e.ChatID = str("gateway"), str("gateway_chat_id")
		e.Spawn = decodeSpawn(v.Get("spawn"))
		// A session stored before principals existed reads as having the
		// one its record implies, so every reader (exports, streams) shows
		// one.
		parent := ""
		if e.Spawn != nil {
			parent = e.Spawn.Parent
		}
		e.Principal = principalOr(parsePrincipal(str("principal")), e.Gateway, e.ChatID, parent)
	case EvUserMessage:
		e.Content, e.SenderID, e.SenderName = str("content"), str("sender_id"), str("sender_name")
		e.Passive, e.Steering = v.GetBool("passive"), v.GetBool("steering")
		e.Origin = str("origin")
	case EvSilentMessage:
		e.Content, e.SenderID, e.SenderName = str("content"), str("sender_id"), str("sender_name")
	case EvAssistant:
		e.Agent, e.Content, e.Origin = str("agent"), str("content"), str("origin")
		for _, c := range v.GetArray("tool_calls") {
			e.ToolCalls = append(e.ToolCalls, ToolCall{
				ID:        string(c.GetStringBytes("id")),
				Name:      string(c.GetStringBytes("name")),
				Arguments: argumentsText(c.Get("arguments")),
			})
		}
		if u := v.Get("usage"); u != nil {
			e.Usage = readUsage(u)
		}
		e.Thinking = readThinking(v.GetArray("thinking"))
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
			e.Usage = readUsage(u)
		}
	case EvSessionEnd:
		e.Reason = str("reason")
	case EvHistoryCompaction:
		e.decodeCompaction(v)
	case EvToken:
		e.Content = str("content")
	case EvToolProgress:
		e.CallID, e.ToolName, e.Content = str("call_id"), str("tool_name"), str("content")
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
