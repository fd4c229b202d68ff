package runtime

import (
	"fmt"
	"sort"
	"time"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
)

// checkpointVersion is written into every checkpoint; a checkpoint of
// another version is ignored and the session is rebuilt from its events.
// Version 2 stores where the window starts (window_seq) and the summary,
// not the window: load replays it from the log. Version 1 checkpoints,
// which hold the history, still load (see checkpoint_window.go).
const checkpointVersion = 2

// encodeCheckpoint writes the folded state.
func (s *state) encodeCheckpoint(dst []byte) []byte {
	w := jsonw.Writer{B: dst}
	w.Object()
	w.Key("v").Int(checkpointVersion)
	w.Key("seq").Uint(s.LastSeq)
	w.Key("id").String(s.ID)
	w.Key("agent").String(s.Agent)
	w.OptString("gateway", s.Gateway)
	w.OptString("chat_id", s.ChatID)
	w.OptString("on_disconnect", string(s.OnDisconnect))
	if s.Spawn != nil {
		s.Spawn.appendJSON(w.Key("spawn"))
	}
	if !s.Principal.IsZero() {
		w.Key("principal").String(s.Principal.String())
	}
	w.Key("created").Int(s.Created.UnixNano())
	w.Key("updated").Int(s.Updated.UnixNano())
	w.Key("turn_active").Bool(s.TurnActive)
	if s.Rounds > 0 {
		w.Key("rounds").Int(int64(s.Rounds))
	}
	w.Key("ended").Bool(s.Ended)
	w.Key("turns").Int(int64(s.Turns))
	w.OptString("preview", s.Preview)
	writeUsage(w.Key("usage"), s.Usage)
	w.Key("window_seq").Uint(s.WindowSeq)
	if s.WindowSeq > 0 && len(s.History) > 0 {
		w.Key("window_len").Int(int64(len(s.History))) // a hint for the replay
	}
	w.OptString("summary", s.Summary)
	if s.TrimNoticed {
		w.Key("trim_noticed").Bool(true)
	}
	if s.WindowSeq == 0 {
		s.writeLegacyHistory(&w)
	}
	writeMessages(w.Key("pending"), s.Pending)
	w.Key("pending_reply").Bool(s.PendingReply)
	w.OptString("origin", s.Origin)
	w.OptString("pending_origin", s.PendingOrigin)
	if len(s.Silent) > 0 {
		w.Key("silent").Array()
		for _, n := range s.Silent {
			w.Object()
			w.Key("content").String(n.Content)
			w.Key("at").Int(n.At.UnixNano())
			w.EndObject()
		}
		w.EndArray()
	}
	writeToolCalls(w.Key("open_calls"), s.OpenCalls)
	if len(s.Approvals) > 0 {
		w.Key("approvals").Array()
		for _, a := range s.Approvals {
			w.Object()
			w.Key("call_id").String(a.CallID)
			w.Key("tool").String(a.Tool)
			w.Key("subject").String(a.Subject)
			w.Key("at").Int(a.At.UnixNano())
			w.EndObject()
		}
		w.EndArray()
	}
	if len(s.Children) > 0 {
		w.Key("children").Array()
		for _, c := range s.Children {
			w.Object()
			w.Key("id").String(c.ID)
			w.Key("seq").Uint(c.Seq)
			w.EndObject()
		}
		w.EndArray()
	}
	if s.TurnSeq > 0 {
		w.Key("turn_seq").Uint(s.TurnSeq)
	}
	w.OptString("last_end", s.LastEnd)
	w.OptString("last_error", s.LastError)
	if len(s.AlwaysAllowed) > 0 {
		w.Key("always_allowed").Array()
		for _, a := range s.AlwaysAllowed {
			w.String(a)
		}
		w.EndArray()
	}
	return w.EndObject().B
}

// writeMessages writes msgs. Thinking blocks are kept only after the last
// user message: a provider needs them back within the running tool loop,
// not for earlier turns, and they would make every checkpoint bigger.
func writeMessages(w *jsonw.Writer, msgs []Message) {
	lastUser := -1
	for i := range msgs {
		if msgs[i].Role == RoleUser {
			lastUser = i
		}
	}
	w.Array()
	for i := range msgs {
		m := &msgs[i]
		w.Object()
		w.Key("role").String(string(m.Role))
		w.Key("content").String(m.Content)
		if len(m.ToolCalls) > 0 {
			writeToolCalls(w.Key("tool_calls"), m.ToolCalls)
		}
		w.OptString("tool_call_id", m.ToolCallID)
		w.OptString("tool_name", m.ToolName)
		if m.IsError {
			w.Key("is_error").Bool(true)
		}
		if i > lastUser && len(m.Thinking) > 0 {
			writeThinking(w.Key("thinking"), m.Thinking)
		}
		w.EndObject()
	}
	w.EndArray()
}

func decodeCheckpoint(p *fastjson.Parser, data []byte) (*state, error) {
	v, err := p.ParseBytes(data)
	if err != nil {
		return nil, fmt.Errorf("decode checkpoint: %w", err)
	}
	n := v.GetInt("v")
	if n != checkpointVersion && n != 1 {
		return nil, fmt.Errorf("decode checkpoint: version %d, want %d", n, checkpointVersion)
	}
	str := func(k string) string { return string(v.GetStringBytes(k)) }
	s := &state{
		ID: str("id"), Agent: str("agent"), Gateway: str("gateway"),
		ChatID: str("chat_id"), OnDisconnect: agents.OnDisconnect(str("on_disconnect")),
		Spawn:         decodeSpawn(v.Get("spawn")),
		LastSeq:       v.GetUint64("seq"),
		Created:       time.Unix(0, v.GetInt64("created")),
		Updated:       time.Unix(0, v.GetInt64("updated")),
		TurnActive:    v.GetBool("turn_active"),
		Rounds:        v.GetInt("rounds"),
		Ended:         v.GetBool("ended"),
		Turns:         v.GetInt("turns"),
		Preview:       str("preview"),
		Origin:        str("origin"),
		PendingOrigin: str("pending_origin"),
		Usage:         readUsage(v.Get("usage")),
		WindowSeq:     v.GetUint64("window_seq"),
		windowLen:     v.GetInt("window_len"),
		Summary:       str("summary"),
		TrimNoticed:   v.GetBool("trim_noticed"),
		Pending:       decodeMessages(v.GetArray("pending")),
		OpenCalls:     decodeToolCalls(v.GetArray("open_calls")),
		LastEnd:       str("last_end"),
		TurnSeq:       v.GetUint64("turn_seq"),
		LastError:     str("last_error"),
	}
	s.Principal = principalOr(parsePrincipal(str("principal")), s.Gateway, s.ChatID, s.parent())
	for _, c := range v.GetArray("children") {
		s.Children = append(s.Children, ChildRef{ID: string(c.GetStringBytes("id")), Seq: c.GetUint64("seq")})
	}
	s.PendingReply = v.GetBool("pending_reply") || (v.Get("pending_reply") == nil && len(s.Pending) > 0)
	for _, n := range v.GetArray("silent") {
		s.Silent = append(s.Silent, Note{Content: string(n.GetStringBytes("content")), At: time.Unix(0, n.GetInt64("at"))})
	}
	if n == 1 {
		s.WindowSeq = 0 // its history is inline, whatever it says
	}
	if s.WindowSeq == 0 {
		s.readLegacyHistory(v)
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
			IsError:    v.GetBool("is_error"),
			Thinking:   readThinking(v.GetArray("thinking")),
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

// SessionStatus is a session's state in listings. The values are Agnx's:
// its client knows no others.
type SessionStatus string

// Session statuses.
const (
	// SessionActive: no turn runs; a message starts one.
	SessionActive SessionStatus = "active"
	// SessionRunning: a turn runs.
	SessionRunning SessionStatus = "running"
	// SessionPaused: the turn waits for a user's decision on a tool call.
	SessionPaused SessionStatus = "paused"
	// SessionCompleted: the session has ended and takes no more messages.
	SessionCompleted SessionStatus = "completed"
)

// InTurn reports whether a turn is under way: running, or paused on an
// approval.
func (s SessionStatus) InTurn() bool { return s == SessionRunning || s == SessionPaused }

// parseStatus reads a status as stored; the names of earlier versions
// (idle, ended) map to today's.
func parseStatus(s string) SessionStatus {
	switch s {
	case "idle", "":
		return SessionActive
	case "ended":
		return SessionCompleted
	}
	return SessionStatus(s)
}

// SessionInfo is what listings show of a session; it is stored as the
// session's meta record and rewritten when the session changes.
type SessionInfo struct {
	ID      string
	Agent   string
	Gateway string
	ChatID  string
	Status  SessionStatus
	Created time.Time
	Updated time.Time
	Turns   int
	LastSeq uint64
	Preview string
	Usage   Usage
	// Parent is the session that spawned this one with the agent tool
	// (a subagent); "" for the others.
	Parent string
	// Principal is who the session speaks for (principal.go). A session
	// stored before principals existed gets the one its gateway and chat
	// imply (agents.PrincipalOf): the owner's unless they say otherwise.
	Principal agents.Principal
}

func (s *state) info() SessionInfo {
	return SessionInfo{
		ID: s.ID, Agent: s.Agent, Gateway: s.Gateway, ChatID: s.ChatID,
		Status: s.status(), Created: s.Created, Updated: s.Updated,
		Turns: s.Turns, LastSeq: s.LastSeq, Preview: s.Preview, Usage: s.Usage,
		Parent: s.parent(), Principal: s.Principal,
	}
}

func (i *SessionInfo) appendJSON(dst []byte) []byte {
	w := jsonw.Writer{B: dst}
	w.Object()
	w.Key("session_id").String(i.ID)
	w.Key("agent").String(i.Agent)
	w.OptString("gateway", i.Gateway)
	w.OptString("chat_id", i.ChatID)
	w.Key("status").String(string(i.Status))
	w.Key("created_at").String(i.Created.UTC().Format(time.RFC3339Nano))
	w.Key("updated_at").String(i.Updated.UTC().Format(time.RFC3339Nano))
	w.Key("turns").Int(int64(i.Turns))
	w.Key("last_seq").Uint(i.LastSeq)
	w.OptString("preview", i.Preview)
	writeUsage(w.Key("usage"), i.Usage)
	w.OptString("parent_id", i.Parent)
	if !i.Principal.IsZero() {
		w.Key("principal").String(i.Principal.String())
	}
	return w.EndObject().B
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
	info := SessionInfo{
		ID: str("session_id"), Agent: str("agent"), Gateway: str("gateway"),
		ChatID: str("chat_id"), Status: parseStatus(str("status")),
		Created: ts("created_at"), Updated: ts("updated_at"),
		Turns: v.GetInt("turns"), LastSeq: v.GetUint64("last_seq"),
		Preview: str("preview"),
		Usage:   readUsage(v.Get("usage")),
		Parent:  str("parent_id"),
	}
	info.Principal = principalOr(parsePrincipal(str("principal")), info.Gateway, info.ChatID, info.Parent)
	return info, nil
}

type fastjsonParser = fastjson.Parser

func sortSessions(s []SessionInfo) {
	// sort.Slice, not slices.SortFunc: a generic sort of a struct type
	// costs the binary a copy of the sort for its shape.
	sort.Slice(s, func(i, j int) bool { return s[i].Updated.After(s[j].Updated) })
}
