package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/sse"
)

// parseAll reads every event of a stream.
func parseAll(r io.Reader) ([]sse.Event, string, error) {
	p := sse.NewReader(r, 0)
	var out []sse.Event
	for {
		ev, err := p.Next()
		if errors.Is(err, io.EOF) {
			return out, p.LastID(), nil
		}
		if err != nil {
			return out, p.LastID(), err
		}
		out = append(out, ev)
	}
}

func TestDecodeSSE(t *testing.T) {
	f, err := os.Open("testdata/sse/tools.txt")
	require.NoError(t, err)
	defer f.Close()
	evs, _, err := parseAll(f)
	require.NoError(t, err)
	var got []runtime.Event
	for _, ev := range evs {
		e, known, err := decodeSSE(ev)
		require.NoError(t, err)
		require.True(t, known)
		got = append(got, e)
	}
	want := []runtime.Event{
		{Seq: 5, Type: runtime.EvAssistant, ToolCalls: []runtime.ToolCall{{ID: "c1", Name: "list_dir", Arguments: "{}"}}},
		{Seq: 6, Type: runtime.EvToolCall, CallID: "c1", ToolName: "list_dir", Arguments: "{}"},
		{Seq: 7, Type: runtime.EvToolResult, CallID: "c1", Content: ". is empty", Success: true},
		{Seq: 8, Type: runtime.EvError, Code: "provider", Content: "cannot reach Ollama"},
		{Seq: 9, Type: runtime.EvTurnEnd, Reason: runtime.TurnCancelled},
	}
	assert.Equal(t, want, got)

	_, _, err = decodeSSE(sse.Event{Name: "done", ID: "x", Data: []byte("{}")})
	assert.ErrorContains(t, err, `id "x" is not a seq`)
	_, _, err = decodeSSE(sse.Event{Name: "token", Data: []byte("{")})
	assert.Error(t, err)
	e, known, err := decodeSSE(sse.Event{Name: "start", ID: "4", Data: []byte("{}")})
	require.NoError(t, err)
	assert.False(t, known)
	assert.Equal(t, uint64(4), e.Seq, "start's id still counts as seen")
}

// TestEncodeDecodeSSE checks the client reads back what the server writes.
func TestEncodeDecodeSSE(t *testing.T) {
	in := []runtime.Event{
		{Type: runtime.EvToken, Content: "he said \"hi\"\n"},
		{Seq: 2, Type: runtime.EvUserMessage, Content: "multi\nline", SenderID: "cli:me"},
		{Seq: 3, Type: runtime.EvAssistant, Content: "ok", ToolCalls: []runtime.ToolCall{{ID: "1", Name: "n", Arguments: `{"a":1}`}}},
		{Seq: 4, Type: runtime.EvTurnEnd, Reason: runtime.TurnCompleted, Usage: runtime.Usage{PromptTokens: 3, CompletionTokens: 4}},
	}
	rec := httptest.NewRecorder()
	w := newSSE(rec)
	for i := range in {
		require.NoError(t, w.event(&in[i]))
	}
	evs, _, err := parseAll(rec.Body)
	require.NoError(t, err)
	require.Len(t, evs, len(in))
	for i, ev := range evs {
		e, known, err := decodeSSE(ev)
		require.NoError(t, err)
		require.True(t, known)
		assert.Equal(t, in[i], e)
	}
}

// FuzzSSEParse checks that no input panics the parser, that read sizes do
// not change what it sees, and that no event name or id holds a line
// break.
func FuzzSSEParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/sse/*.txt")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, last, err := parseAll(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("error on in-memory input: %v", err)
		}
		bytewise, last2, _ := parseAll(iotest.OneByteReader(bytes.NewReader(data)))
		if len(whole) != len(bytewise) || last != last2 {
			t.Fatalf("read sizes change the result: %d vs %d events", len(whole), len(bytewise))
		}
		for i, ev := range whole {
			if ev.Name != bytewise[i].Name || ev.ID != bytewise[i].ID || !bytes.Equal(ev.Data, bytewise[i].Data) {
				t.Fatalf("event %d differs: %+v vs %+v", i, ev, bytewise[i])
			}
			if strings.ContainsAny(ev.Name+ev.ID, "\r\n") || bytes.ContainsRune(ev.Data, '\r') {
				t.Fatalf("line break inside a field: %+v", ev)
			}
			_, _, _ = decodeSSE(ev)
		}
	})
}
