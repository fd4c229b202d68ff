package httpapi

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

func TestAppendSSE(t *testing.T) {
	tests := []struct {
		name string
		ev   sseEvent
		want string
	}{
		{"id, name, data", sseEvent{ID: "3", Name: "done", Data: []byte(`{}`)}, "id: 3\nevent: done\ndata: {}\n\n"},
		{"no id", sseEvent{Name: "token", Data: []byte(`{"content":"x"}`)}, "event: token\ndata: {\"content\":\"x\"}\n\n"},
		{"no name", sseEvent{Data: []byte("x")}, "data: x\n\n"},
		{"empty data", sseEvent{Name: "e"}, "event: e\ndata: \n\n"},
		{"lines", sseEvent{Data: []byte("a\nb\r\nc\rd\n")}, "data: a\ndata: b\ndata: c\ndata: d\ndata: \n\n"},
		{"blank lines and CR LF apart", sseEvent{Data: []byte("\n\r\r\n\n")}, "data: \ndata: \ndata: \ndata: \ndata: \n\n"},
		{"name and id cut at a line break", sseEvent{ID: "1\n2", Name: "a\rb", Data: []byte("d")}, "id: 1\nevent: a\ndata: d\n\n"},
		{"id with NUL left out", sseEvent{ID: "1\x00", Name: "n", Data: []byte("d")}, "event: n\ndata: d\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(appendSSE([]byte("x"), tt.ev))[1:])
		})
	}
}

// FuzzSSERoundTrip writes events with appendSSE, a keep-alive between
// them, and reads them back with an sseReader: each comes back as it was
// written, except what the format cannot carry (line breaks in data come
// back as LF; a name or id ends at a line break; an id holding NUL is
// dropped; no name reads as "message").
func FuzzSSERoundTrip(f *testing.F) {
	f.Add("done", "3", []byte(`{"status":"completed"}`), "token", "", []byte("a\r\nb\rc\n\nd"))
	f.Add("", "", []byte(""), "x:y", "1\x00", []byte(":\n: comment\ndata: x\n\n"))
	f.Add(" spaced", " 7", []byte(" lead\r"), "\xef\xbb\xbf", "\n", []byte("\r\n\r\n"))
	f.Fuzz(func(t *testing.T, name1, id1 string, data1 []byte, name2, id2 string, data2 []byte) {
		in := []sseEvent{{Name: name1, ID: id1, Data: data1}, {Name: name2, ID: id2, Data: data2}}
		var stream []byte
		for _, ev := range in {
			stream = appendSSE(stream, ev)
			stream = append(stream, ": keep-alive\n\n"...)
		}
		p := newSSEReader(bytes.NewReader(stream))
		for i, ev := range in {
			got, err := p.Next()
			require.NoError(t, err, "event %d of %q", i, stream)
			want := sseEvent{Name: firstLine(ev.Name), ID: firstLine(ev.ID), Data: normalizeLines(ev.Data)}
			if want.Name == "" {
				want.Name = "message"
			}
			if strings.IndexByte(want.ID, 0) >= 0 {
				want.ID = ""
			}
			assert.Equal(t, want.Name, got.Name, "name of event %d in %q", i, stream)
			assert.Equal(t, want.ID, got.ID, "id of event %d in %q", i, stream)
			assert.Equal(t, string(want.Data), string(got.Data), "data of event %d in %q", i, stream)
		}
		_, err := p.Next()
		assert.True(t, errors.Is(err, io.EOF), "nothing more in %q: %v", stream, err)
	})
}

// normalizeLines turns CRLF and CR into LF, as SSE data lines do.
func normalizeLines(b []byte) []byte {
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	return []byte(strings.ReplaceAll(s, "\r", "\n"))
}

func BenchmarkAppendSSE(b *testing.B) {
	ev := sseEvent{ID: "12345", Name: "token", Data: []byte(`{"content":"Hello, how can I help you today?"}`)}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendSSE(buf[:0], ev)
	}
}

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
			w = appendSSE(w, sseEvent{Name: name, ID: idOf(in.Seq), Data: data})
			ev, err := newSSEReader(bytes.NewReader(w)).Next()
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
