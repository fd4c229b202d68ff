package httpapi

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/sse"
)

// Every event type of the runtime either goes out on the event stream and
// the client reads it back (the fields the stream carries), or is one a
// client has no use for. A new type fails here until it is one or the
// other.
func TestEncodeSSE_EveryType(t *testing.T) {
	tests := map[runtime.EventType]struct {
		in   runtime.Event
		name string        // "": not streamed
		want runtime.Event // what the client reads back
	}{
		runtime.EvSessionStart:  {in: runtime.Event{Agent: "a", OnDisconnect: "pause"}},
		runtime.EvSessionEnd:    {in: runtime.Event{Reason: "deleted"}},
		runtime.EvSilentMessage: {in: runtime.Event{Content: "hi", SenderID: "7", SenderName: "Ann"}},
		runtime.EvHistoryCompaction: {in: runtime.Event{Content: "sum",
			Compaction: &runtime.Compaction{Upto: 3, Method: runtime.CompactSummary}}},
		runtime.EvUserMessage: {name: "user_message",
			in:   runtime.Event{Content: "hi\n", SenderID: "cli:me", SenderName: "Me"},
			want: runtime.Event{Content: "hi\n", SenderID: "cli:me"}},
		runtime.EvAssistant: {name: "message",
			in: runtime.Event{Agent: "a", Content: "ok", Usage: runtime.Usage{PromptTokens: 1},
				ToolCalls: []runtime.ToolCall{{ID: "1", Name: "n", Arguments: `{"a":1}`}}},
			want: runtime.Event{Content: "ok", ToolCalls: []runtime.ToolCall{{ID: "1", Name: "n", Arguments: `{"a":1}`}}}},
		runtime.EvToolCall: {name: "tool_call",
			in:   runtime.Event{CallID: "1", ToolName: "bash", Arguments: `{"command":"ls"}`},
			want: runtime.Event{CallID: "1", ToolName: "bash", Arguments: `{"command":"ls"}`}},
		runtime.EvToolResult: {name: "tool_result",
			in:   runtime.Event{CallID: "1", ToolName: "bash", Success: true, Content: "x", Details: []byte(`{"exit_code":0}`)},
			want: runtime.Event{CallID: "1", Success: true, Content: "x", Details: []byte(`{"exit_code":0}`)}},
		runtime.EvApprovalRequired: {name: "approval_required",
			in:   runtime.Event{CallID: "1", ToolName: "bash", Content: "rm x"},
			want: runtime.Event{CallID: "1", ToolName: "bash", Content: "rm x"}},
		runtime.EvApprovalDecision: {name: "approval_decision",
			in:   runtime.Event{CallID: "1", Decision: runtime.DenyCall, Reason: "user"},
			want: runtime.Event{CallID: "1", Decision: runtime.DenyCall, Reason: "user"}},
		runtime.EvError: {name: "error",
			in:   runtime.Event{Code: "provider", Content: "cannot reach Ollama"},
			want: runtime.Event{Code: "provider", Content: "cannot reach Ollama"}},
		runtime.EvTurnEnd: {name: "done",
			in:   runtime.Event{Reason: runtime.TurnCompleted, Usage: runtime.Usage{PromptTokens: 3, CompletionTokens: 4}},
			want: runtime.Event{Reason: runtime.TurnCompleted, Usage: runtime.Usage{PromptTokens: 3, CompletionTokens: 4}}},
		runtime.EvToken: {name: "token", in: runtime.Event{Content: "He"}, want: runtime.Event{Content: "He"}},
		runtime.EvToolProgress: {name: "tool_progress",
			in:   runtime.Event{CallID: "1", ToolName: "worker", Content: "editing"},
			want: runtime.Event{CallID: "1", ToolName: "worker", Content: "editing"}},
	}
	for i, info := range runtime.EventTypes() {
		t.Run(string(info.Type), func(t *testing.T) {
			tt, ok := tests[info.Type]
			require.True(t, ok, "%s: decide whether the event stream carries it (encodeSSE, decodeSSE) and add it here", info.Type)
			in := tt.in
			in.Type = info.Type
			if info.Durable {
				in.Seq = uint64(i + 1)
			}
			name, data := encodeSSE(&in)
			assert.Equal(t, tt.name, name)
			if tt.name == "" {
				return
			}
			var w []byte
			w = sse.AppendEvent(w, sse.Event{Name: name, ID: idOf(in.Seq), Data: data})
			ev, err := sse.NewReader(bytes.NewReader(w), 0).Next()
			require.NoError(t, err)
			back, known, err := decodeSSE(ev)
			require.NoError(t, err)
			require.True(t, known, "decodeSSE does not know %s", name)
			want := tt.want
			want.Type, want.Seq = info.Type, in.Seq
			assert.Equal(t, want, back)
		})
	}
}

func idOf(seq uint64) string {
	if seq == 0 {
		return ""
	}
	return strconv.FormatUint(seq, 10)
}
