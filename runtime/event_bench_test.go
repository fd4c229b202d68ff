package runtime

import (
	"strings"
	"testing"
	"time"
)

// BenchmarkEvent_AppendJSON encodes what a turn commits most: an answer
// with a tool call, and a tool's result.
func BenchmarkEvent_AppendJSON(b *testing.B) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 123, time.UTC)
	events := []Event{
		{Seq: 41, Time: at, Type: EvAssistant, Agent: "assistant", Content: "Let me look at the folder first.",
			ToolCalls: []ToolCall{{ID: "call_1", Name: "list_dir", Arguments: `{"path":"."}`}}, Usage: Usage{PromptTokens: 812, CompletionTokens: 24}},
		{Seq: 42, Time: at, Type: EvToolResult, CallID: "call_1", ToolName: "list_dir", Success: true,
			Content: strings.Repeat("file_name.go\n", 40), Details: []byte(`{"entries":40}`)},
	}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		for i := range events {
			buf = events[i].AppendJSON(buf[:0])
		}
	}
}

// BenchmarkState_EncodeCheckpoint encodes a checkpoint of a 40-message
// context window.
func BenchmarkState_EncodeCheckpoint(b *testing.B) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 123, time.UTC)
	st := &state{ID: "0123456789abcdef", Agent: "assistant", Created: at, Updated: at, LastSeq: 400, Turns: 20}
	for i := range 20 {
		st.History = append(st.History, Message{Role: RoleUser, Content: "Question number " + strings.Repeat("x", i)},
			Message{Role: RoleAssistant, Content: strings.Repeat("An answer line.\n", 8)})
	}
	buf := make([]byte, 0, 16<<10)
	b.ReportAllocs()
	for b.Loop() {
		buf = st.encodeCheckpoint(buf[:0])
	}
}
