package runtime

import (
	"bytes"
	"encoding/json"
	"io"
	"time"
)

// agnxLine is one line of Agnx's events.jsonl. Only the fields of Type are
// set; the omitempty ones are optional in Agnx's reader.
type agnxLine struct {
	Seq       uint64  `json:"seq"`
	Timestamp string  `json:"timestamp"`
	Type      string  `json:"type"`
	Agent     *string `json:"agent,omitempty"`
	Disc      string  `json:"on_disconnect,omitempty"`
	Gateway   string  `json:"gateway,omitempty"`
	ChatID    string  `json:"gateway_chat_id,omitempty"`
	// Principal, on session_start, is a lite extension Agnx ignores.
	Principal string          `json:"principal,omitempty"`
	Content   *string         `json:"content,omitempty"`
	SenderID  *string         `json:"sender_id,omitempty"`
	Sender    string          `json:"sender_name,omitempty"`
	ToolCalls []agnxCall      `json:"tool_calls,omitempty"`
	Usage     *agnxUsage      `json:"usage,omitempty"`
	CallID    *string         `json:"call_id,omitempty"`
	ToolName  *string         `json:"tool_name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    *agnxResult     `json:"result,omitempty"`
	Command   *string         `json:"command,omitempty"`
	Decision  string          `json:"decision,omitempty"`
	From      string          `json:"from,omitempty"`
	To        string          `json:"to,omitempty"`
	Code      *string         `json:"code,omitempty"`
	Message   *string         `json:"message,omitempty"`
	Reason    string          `json:"reason,omitempty"`
}

type agnxCall struct {
	CallID    string          `json:"call_id"`
	ToolName  string          `json:"tool_name"`
	Arguments json.RawMessage `json:"arguments"`
}

type agnxUsage struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Total      int `json:"total_tokens"`
}

type agnxResult struct {
	Success bool   `json:"success"`
	Content string `json:"content"`
}

// AgnxWriter writes a session's stored events as Agnx's events.jsonl:
// the types and fields of Agnx's session files, numbered again from 1.
// agnx-lite's own types (turn_end, tool_call, whose calls are in the
// assistant_response before them) have no Agnx line and are left out;
// session_end becomes a status_change to completed. State then gives the
// matching state.json.
type AgnxWriter struct {
	w     io.Writer
	seq   uint64
	st    state
	last  time.Time
	lines bytes.Buffer
}

// NewAgnxWriter returns a writer of events.jsonl lines to w.
func NewAgnxWriter(w io.Writer) *AgnxWriter { return &AgnxWriter{w: w} }

// Write writes e's line, if it has one, and folds e into the state.
func (x *AgnxWriter) Write(e Event) error {
	if !e.Durable() {
		return nil
	}
	if e.Type != EvHistoryCompaction { // state.json holds the whole conversation
		x.st.apply(&e)
	}
	l, ok := x.line(&e)
	if !ok {
		return nil
	}
	x.seq++
	l.Seq, l.Timestamp = x.seq, e.Time.UTC().Format(time.RFC3339Nano)
	x.last = e.Time
	x.lines.Reset()
	enc := json.NewEncoder(&x.lines)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return err
	}
	_, err := x.w.Write(x.lines.Bytes())
	return err
}

func ptr(s string) *string { return &s }

// line maps e to its Agnx line; false for types Agnx has no line for.
func (x *AgnxWriter) line(e *Event) (agnxLine, bool) {
	l := agnxLine{Type: string(e.Type)}
	switch e.Type {
	case EvSessionStart:
		l.Agent, l.Disc, l.Gateway, l.ChatID = ptr(e.Agent), string(e.OnDisconnect), e.Gateway, e.ChatID
		l.Principal = x.st.Principal.String() // the record's, for a session stored before principals
	case EvUserMessage:
		l.Content, l.Sender = ptr(e.Content), e.SenderName
		if e.SenderID != "" {
			l.SenderID = ptr(e.SenderID)
		}
	case EvAssistant:
		agent := e.Agent
		if agent == "" {
			agent = x.st.Agent
		}
		l.Agent, l.Content = ptr(agent), ptr(e.Content)
		for _, c := range e.ToolCalls {
			l.ToolCalls = append(l.ToolCalls, agnxCall{CallID: c.ID, ToolName: c.Name, Arguments: jsonArguments(c.Arguments)})
		}
		if e.Usage != (Usage{}) {
			l.Usage = &agnxUsage{e.Usage.PromptTokens, e.Usage.CompletionTokens, e.Usage.Total()}
		}
	case EvToolResult:
		l.CallID, l.Result = ptr(e.CallID), &agnxResult{Success: e.Success, Content: e.Content}
	case EvApprovalRequired:
		l.CallID, l.Command = ptr(e.CallID), ptr(e.Content)
	case EvApprovalDecision:
		l.CallID, l.Decision = ptr(e.CallID), e.Decision
	case EvError:
		l.Code, l.Message = ptr(e.Code), ptr(e.Content)
	case EvSessionEnd:
		l.Type, l.From, l.To = "status_change", string(SessionActive), string(SessionCompleted)
	case EvTurnEnd, EvToolCall, EvHistoryCompaction, EvSilentMessage, EvToken, EvToolProgress:
		// turn_end, tool_call and history_compaction are agnx-lite's:
		// Agnx would skip the line, its assistant_response already holds
		// the calls, and the messages a compaction left out of the window
		// are still in the log; silent_message is group chatter Agnx has
		// no line for; token and tool_progress are never stored.
		fallthrough
	default:
		return l, false
	}
	return l, true
}

// jsonArguments is a tool call's arguments as a JSON value: the text when
// it is JSON, else the text as a JSON string, and {} when empty.
func jsonArguments(args string) json.RawMessage {
	switch {
	case args == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(args)):
		var b bytes.Buffer
		if json.Compact(&b, []byte(args)) == nil {
			return b.Bytes()
		}
	}
	s, _ := json.Marshal(args)
	return s
}
