package runtime

import (
	"fmt"
	"slices"
	"time"

	"github.com/valyala/fastjson"
)

// checkpointVersion is written into every checkpoint; a checkpoint of
// another version is ignored and the session is rebuilt from its events.
const checkpointVersion = 1

// encodeCheckpoint writes the folded state.
func (s *state) encodeCheckpoint(dst []byte) []byte {
	o := newObject(dst)
	o.int("v", checkpointVersion)
	o.int("seq", int64(s.LastSeq))
	o.str("id", s.ID)
	o.str("agent", s.Agent)
	o.strOpt("gateway", s.Gateway)
	o.strOpt("chat_id", s.ChatID)
	o.strOpt("on_disconnect", s.OnDisconnect)
	o.int("created", s.Created.UnixNano())
	o.int("updated", s.Updated.UnixNano())
	o.bool("turn_active", s.TurnActive)
	if s.Rounds > 0 {
		o.int("rounds", int64(s.Rounds))
	}
	o.bool("ended", s.Ended)
	o.int("turns", int64(s.Turns))
	o.strOpt("preview", s.Preview)
	o.key("usage")
	o.b = appendUsage(o.b, s.Usage)
	o.key("history")
	o.b = appendMessages(o.b, s.History)
	o.key("pending")
	o.b = appendMessages(o.b, s.Pending)
	o.key("open_calls")
	o.b = appendToolCalls(o.b, s.OpenCalls)
	if len(s.Approvals) > 0 {
		o.key("approvals")
		o.b = append(o.b, '[')
		for i, a := range s.Approvals {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			ao := newObject(o.b)
			ao.str("call_id", a.CallID)
			ao.str("tool", a.Tool)
			ao.str("subject", a.Subject)
			ao.int("at", a.At.UnixNano())
			o.b = ao.end()
		}
		o.b = append(o.b, ']')
	}
	if len(s.AlwaysAllowed) > 0 {
		o.key("always_allowed")
		o.b = append(o.b, '[')
		for i, a := range s.AlwaysAllowed {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = AppendJSONString(o.b, a)
		}
		o.b = append(o.b, ']')
	}
	return o.end()
}

func appendMessages(dst []byte, msgs []Message) []byte {
	dst = append(dst, '[')
	for i := range msgs {
		if i > 0 {
			dst = append(dst, ',')
		}
		m := &msgs[i]
		o := newObject(dst)
		o.str("role", string(m.Role))
		o.str("content", m.Content)
		if len(m.ToolCalls) > 0 {
			o.key("tool_calls")
			o.b = appendToolCalls(o.b, m.ToolCalls)
		}
		o.strOpt("tool_call_id", m.ToolCallID)
		o.strOpt("tool_name", m.ToolName)
		dst = o.end()
	}
	return append(dst, ']')
}

func decodeCheckpoint(p *fastjson.Parser, data []byte) (*state, error) {
	v, err := p.ParseBytes(data)
	if err != nil {
		return nil, fmt.Errorf("decode checkpoint: %w", err)
	}
	if n := v.GetInt("v"); n != checkpointVersion {
		return nil, fmt.Errorf("decode checkpoint: version %d, want %d", n, checkpointVersion)
	}
	str := func(k string) string { return string(v.GetStringBytes(k)) }
	s := &state{
		ID: str("id"), Agent: str("agent"), Gateway: str("gateway"),
		ChatID: str("chat_id"), OnDisconnect: str("on_disconnect"),
		LastSeq:    v.GetUint64("seq"),
		Created:    time.Unix(0, v.GetInt64("created")),
		Updated:    time.Unix(0, v.GetInt64("updated")),
		TurnActive: v.GetBool("turn_active"),
		Rounds:     v.GetInt("rounds"),
		Ended:      v.GetBool("ended"),
		Turns:      v.GetInt("turns"),
		Preview:    str("preview"),
		Usage:      Usage{v.GetInt("usage", "prompt_tokens"), v.GetInt("usage", "completion_tokens")},
		History:    decodeMessages(v.GetArray("history")),
		Pending:    decodeMessages(v.GetArray("pending")),
		OpenCalls:  decodeToolCalls(v.GetArray("open_calls")),
	}
	for i := range s.History {
		s.HistTokens += estimateTokens(&s.History[i])
	}
	for _, a := range v.GetArray("approvals") {
		s.Approvals = append(s.Approvals, Approval{CallID: string(a.GetStringBytes("call_id")),
			Tool: string(a.GetStringBytes("tool")), Subject: string(a.GetStringBytes("subject")),
			At: time.Unix(0, a.GetInt64("at"))})
	}
	for _, a := range v.GetArray("always_allowed") {
		s.AlwaysAllowed = append(s.AlwaysAllowed, string(a.GetStringBytes()))
	}
	return s, nil
}

func decodeMessages(vs []*fastjson.Value) []Message {
	if len(vs) == 0 {
		return nil
	}
	out := make([]Message, len(vs))
	for i, v := range vs {
		out[i] = Message{
			Role:       Role(v.GetStringBytes("role")),
			Content:    string(v.GetStringBytes("content")),
			ToolCalls:  decodeToolCalls(v.GetArray("tool_calls")),
			ToolCallID: string(v.GetStringBytes("tool_call_id")),
			ToolName:   string(v.GetStringBytes("tool_name")),
		}
	}
	return out
}

func decodeToolCalls(vs []*fastjson.Value) []ToolCall {
	if len(vs) == 0 {
		return nil
	}
	out := make([]ToolCall, len(vs))
	for i, c := range vs {
		out[i] = ToolCall{
			ID:        string(c.GetStringBytes("id")),
			Name:      string(c.GetStringBytes("name")),
			Arguments: argumentsText(c.Get("arguments")),
		}
	}
	return out
}

// SessionInfo is what listings show of a session; it is stored as the
// session's meta record and rewritten when the session changes.
type SessionInfo struct {
	ID      string
	Agent   string
	Gateway string
	ChatID  string
	Status  string // idle | running | ended
	Created time.Time
	Updated time.Time
	Turns   int
	LastSeq uint64
	Preview string
	Usage   Usage
}

func (s *state) info() SessionInfo {
	return SessionInfo{
		ID: s.ID, Agent: s.Agent, Gateway: s.Gateway, ChatID: s.ChatID,
		Status: s.status(), Created: s.Created, Updated: s.Updated,
		Turns: s.Turns, LastSeq: s.LastSeq, Preview: s.Preview, Usage: s.Usage,
	}
}

func (i *SessionInfo) appendJSON(dst []byte) []byte {
	o := newObject(dst)
	o.str("session_id", i.ID)
	o.str("agent", i.Agent)
	o.strOpt("gateway", i.Gateway)
	o.strOpt("chat_id", i.ChatID)
	o.str("status", i.Status)
	o.str("created_at", i.Created.UTC().Format(time.RFC3339Nano))
	o.str("updated_at", i.Updated.UTC().Format(time.RFC3339Nano))
	o.int("turns", int64(i.Turns))
	o.int("last_seq", int64(i.LastSeq))
	o.strOpt("preview", i.Preview)
	o.key("usage")
	o.b = appendUsage(o.b, i.Usage)
	return o.end()
}

// decodeInfo parses a meta record.
func decodeInfo(p *fastjson.Parser, data []byte) (SessionInfo, error) {
	v, err := p.ParseBytes(data)
	if err != nil {
		return SessionInfo{}, fmt.Errorf("decode session meta: %w", err)
	}
	str := func(k string) string { return string(v.GetStringBytes(k)) }
	ts := func(k string) time.Time {
		t, _ := time.Parse(time.RFC3339Nano, str(k))
		return t
	}
	return SessionInfo{
		ID: str("session_id"), Agent: str("agent"), Gateway: str("gateway"),
		ChatID: str("chat_id"), Status: str("status"),
		Created: ts("created_at"), Updated: ts("updated_at"),
		Turns: v.GetInt("turns"), LastSeq: v.GetUint64("last_seq"),
		Preview: str("preview"),
		Usage:   Usage{v.GetInt("usage", "prompt_tokens"), v.GetInt("usage", "completion_tokens")},
	}, nil
}

type fastjsonParser = fastjson.Parser

func sortSessions(s []SessionInfo) {
	slices.SortFunc(s, func(a, b SessionInfo) int { return b.Updated.Compare(a.Updated) })
}
