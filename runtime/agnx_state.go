package runtime

import (
	"encoding/json"
	"time"
)

// agnxState is Agnx's state.json, schema_version "2": the snapshot its
// session store lists and loads a session from.
type agnxState struct {
	SchemaVersion string        `json:"schema_version"`
	SessionID     string        `json:"session_id"`
	Agent         string        `json:"agent"`
	Status        string        `json:"status"`
	CreatedAt     time.Time     `json:"created_at"`
	SnapshotAt    time.Time     `json:"snapshot_at"`
	LastEventSeq  uint64        `json:"last_event_seq"`
	CheckpointSeq uint64        `json:"checkpoint_seq"`
	Conversation  []agnxMessage `json:"conversation"`
	Config        agnxConfig    `json:"config"`
}

type agnxMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content,omitempty"`
	ToolCalls  []agnxFunction `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type agnxFunction struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type agnxConfig struct {
	OnDisconnect string `json:"on_disconnect,omitempty"`
	Gateway      string `json:"gateway,omitempty"`
	ChatID       string `json:"gateway_chat_id,omitempty"`
}

// State returns state.json for the lines written so far, as session id:
// the whole conversation, checkpointed at the last line, so Agnx loads it
// without replaying events. The status is completed for an ended session,
// else active: a turn or an approval that was open is not carried over
// (Agnx would need its own pending-approval record).
func (x *AgnxWriter) State(id string) ([]byte, error) {
	st := &x.st
	s := agnxState{
		SchemaVersion: "2", SessionID: id, Agent: st.Agent, Status: string(SessionActive),
		CreatedAt: st.Created.UTC(), SnapshotAt: x.last.UTC(),
		LastEventSeq: x.seq, CheckpointSeq: x.seq,
		Conversation: []agnxMessage{},
		Config:       agnxConfig{OnDisconnect: string(st.OnDisconnect), Gateway: st.Gateway, ChatID: st.ChatID},
	}
	if st.Ended {
		s.Status = string(SessionCompleted)
	}
	for _, m := range append(st.History[:len(st.History):len(st.History)], st.Pending...) {
		am := agnxMessage{Role: string(m.Role), ToolCallID: m.ToolCallID}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			am.Content = ptr(m.Content)
		}
		for _, c := range m.ToolCalls {
			f := agnxFunction{ID: c.ID, Type: "function"}
			f.Function.Name, f.Function.Arguments = c.Name, c.Arguments
			am.ToolCalls = append(am.ToolCalls, f)
		}
		s.Conversation = append(s.Conversation, am)
	}
	return json.MarshalIndent(s, "", "  ")
}
