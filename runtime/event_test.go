package runtime

import (
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/agents"
)

func TestEvent_RoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 123, time.UTC)
	events := []Event{
		{Type: EvSessionStart, Agent: "assistant", OnDisconnect: "pause", Gateway: "telegram", ChatID: "42",
			Principal: agents.TelegramPrincipal("42", false)},
		{Type: EvUserMessage, Content: "hi \"there\"\n", SenderID: "u1", SenderName: "Ada"},
		{Type: EvAssistant, Agent: "assistant", Content: "ok", Usage: Usage{PromptTokens: 10, CompletionTokens: 2},
			ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}, {ID: "c2", Name: "x", Arguments: `{broken`}}},
		{Type: EvAssistant, Content: "thought", Usage: Usage{PromptTokens: 900, CompletionTokens: 5, CacheReadTokens: 800, CacheWriteTokens: 90},
			Thinking: []ThinkingBlock{{Text: "hmm", Signature: "sig=="}, {Redacted: "ENC"}}},
		{Type: EvToolCall, CallID: "c1", ToolName: "bash", Arguments: `{"command":"ls"}`},
		{Type: EvToolResult, CallID: "c1", ToolName: "bash", Success: true, Content: "a\nb", Details: []byte(`{"exit_code":0}`)},
		{Type: EvApprovalRequired, CallID: "c1", ToolName: "bash", Content: "rm -rf x"},
		{Type: EvApprovalDecision, CallID: "c1", Decision: AllowAlways, Reason: "user"},
		{Type: EvError, Code: "model_not_found", Content: "run ollama pull x"},
		{Type: EvTurnEnd, Reason: TurnCompleted, Usage: Usage{PromptTokens: 12, CompletionTokens: 3}},
		{Type: EvSessionEnd, Reason: "completed"},
	}
	var p fastjson.Parser
	for i, e := range events {
		e.Seq, e.Time = uint64(i+1), at
		data := e.AppendJSON(nil)
		require.NoError(t, fastjson.ValidateBytes(data), string(data))
		back, err := DecodeEvent(&p, data)
		require.NoError(t, err, string(data))
		assert.Equal(t, e, back, string(data))
	}
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add([]byte(`{"seq":1,"timestamp":"2026-01-01T00:00:00Z","type":"user_message","content":"hi"}`))
	f.Add([]byte(`{"seq":2,"type":"assistant_response","tool_calls":[{"id":"a","name":"b","arguments":{"x":[1,2]}}]}`))
	f.Add([]byte(`{"seq":3,"type":"tool_result","result":{"success":true,"content":"x","details":{"a":1}}}`))
	f.Add([]byte(`{"type":"nope"}`))
	f.Add([]byte(`{"seq":9,"type":"history_compaction","upto":5,"content":"They talked.","method":"summary","covers_from":1,"covers_to":4,"tokens_before":900,"tokens_after":300,"usage":{"prompt_tokens":80,"completion_tokens":9}}`))
	f.Add([]byte(`{"seq":9,"type":"history_compaction","upto":-3,"method":7,"tokens_before":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p fastjson.Parser
		e, err := DecodeEvent(&p, data)
		if err != nil {
			return
		}
		// What decodes re-encodes to valid JSON that decodes the same.
		again, err := DecodeEvent(&p, e.AppendJSON(nil))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		// Invalid UTF-8 in a string is written as U+FFFD, so such content
		// changes once, and then no more.
		sameContent := again.Content == e.Content || !utf8.ValidString(e.Content)
		if again.Type != e.Type || !sameContent || len(again.ToolCalls) != len(e.ToolCalls) ||
			(e.Compaction != nil && *again.Compaction != *e.Compaction) {
			t.Fatalf("round trip changed the event: %+v != %+v", again, e)
		}
		third, err := DecodeEvent(&p, again.AppendJSON(nil))
		if err != nil || third.Content != again.Content {
			t.Fatalf("a second round trip changed the event: %v, %q != %q", err, third.Content, again.Content)
		}
	})
}
