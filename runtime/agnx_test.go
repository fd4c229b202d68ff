package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// exportAgnx writes evs as Agnx's events.jsonl and state.json.
func exportAgnx(t *testing.T, id string, evs []runtime.Event) (lines []map[string]any, raw []byte, state map[string]any) {
	t.Helper()
	var b bytes.Buffer
	w := runtime.NewAgnxWriter(&b)
	for _, e := range evs {
		require.NoError(t, w.Write(e))
	}
	raw = bytes.Clone(b.Bytes())
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		lines = append(lines, m)
	}
	st, err := w.State(id)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(st, &state))
	return lines, raw, state
}

// importAgnx reads events.jsonl lines as an import does.
func importAgnx(t *testing.T, raw []byte) []runtime.Event {
	t.Helper()
	var l runtime.AgnxLog
	var n int64
	require.NoError(t, l.ReadAgnxLog(bytes.NewReader(raw), &n))
	assert.Zero(t, l.Skipped)
	return runtime.AgnxTurns(l.Events)
}

// A session with a tool call exports as Agnx's lines, and imports back to
// the same conversation.
func TestAgnxExport_RoundTrip(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	h.turn(sid, "hello there")
	h.turn(sid, `please use read_file {"path":"notes.txt"}`)
	h.turn(sid, "bye")
	orig := h.durable(sid)

	lines, raw, state := exportAgnx(t, sid, orig)
	var kinds []string
	for i, l := range lines {
		assert.EqualValues(t, i+1, l["seq"], "numbered from 1 without gaps")
		assert.NotEmpty(t, l["timestamp"])
		kinds = append(kinds, l["type"].(string))
	}
	assert.Equal(t, []string{"session_start", "user_message", "assistant_response", "user_message",
		"assistant_response", "tool_result", "assistant_response", "user_message", "assistant_response"}, kinds)
	call := lines[4]["tool_calls"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"path": "notes.txt"}, call["arguments"], "arguments are JSON")
	assert.Equal(t, "read_file", call["tool_name"])
	assert.Equal(t, call["call_id"], lines[5]["call_id"])
	result := lines[5]["result"].(map[string]any)
	assert.Equal(t, map[string]any{"success": true, "content": result["content"]}, result)
	assert.Equal(t, "assistant", lines[2]["agent"])
	assert.NotContains(t, lines[2], "tool_calls", "omitted when there are none")
	assert.Equal(t, "2", state["schema_version"])
	assert.EqualValues(t, len(lines), state["last_event_seq"])
	assert.Equal(t, state["last_event_seq"], state["checkpoint_seq"])
	assert.Equal(t, "active", state["status"])

	info, err := h.loop.ImportSession(context.Background(), importAgnx(t, raw))
	require.NoError(t, err)
	assert.Equal(t, 3, info.Turns)
	_, _, again := exportAgnx(t, sid, h.durable(info.ID))
	assert.Equal(t, state["conversation"], again["conversation"], "same conversation")
	assert.Len(t, state["conversation"], 8)
}

// A session folder written from the contract's table, legacy types and
// unreadable lines included, imports as the conversation Agnx kept.
func TestAgnxImport_Fixture(t *testing.T) {
	evs, skipped, err := runtime.ReadAgnxSession("testdata/agnx/session")
	require.NoError(t, err)
	assert.Equal(t, 2, skipped, "a cut line and an unknown type")
	h := newHarness(t, llmtest.Echo())
	info, err := h.loop.ImportSession(context.Background(), evs)
	require.NoError(t, err)
	assert.Equal(t, 3, info.Turns)
	assert.Equal(t, runtime.SessionCompleted, info.Status)

	got := h.durable(info.ID)
	var ends []string
	for _, e := range got {
		if e.Type == runtime.EvTurnEnd {
			ends = append(ends, e.Reason)
		}
	}
	assert.Equal(t, []string{"completed", "failed", "completed"}, ends)
	lines, _, state := exportAgnx(t, info.ID, got)
	assert.Equal(t, "completed", state["status"])
	assert.Equal(t, map[string]any{"on_disconnect": "continue", "gateway": "telegram", "gateway_chat_id": "42"}, state["config"])
	text := func(s string) map[string]any { return map[string]any{"role": "user", "content": s} }
	conv := state["conversation"].([]any)
	require.Len(t, conv, 12)
	assert.Equal(t, text("What is in notes.txt?"), conv[0])
	assert.Equal(t, map[string]any{"role": "tool", "content": "milk", "tool_call_id": "c1"}, conv[2])
	assert.Equal(t, map[string]any{"role": "assistant", "content": "It says milk."}, conv[3])
	assert.Equal(t, map[string]any{"role": "tool", "content": "the tool call was skipped: cancelled by the user", "tool_call_id": "c3"}, conv[7])
	assert.Equal(t, text("legacy now"), conv[8])
	legacy := conv[9].(map[string]any)
	assert.Equal(t, "Let me look.", legacy["content"])
	assert.Equal(t, []any{map[string]any{"id": "c4", "type": "function",
		"function": map[string]any{"name": "read_file", "arguments": `{"path":"a.txt"}`}}}, legacy["tool_calls"])
	assert.Equal(t, map[string]any{"role": "assistant", "content": "Done."}, conv[11])
	// The export carries the approval and the error the import kept.
	var kinds []string
	for _, l := range lines {
		kinds = append(kinds, l["type"].(string))
	}
	assert.Contains(t, kinds, "approval_required")
	assert.Contains(t, kinds, "approval_decision")
	assert.Contains(t, kinds, "error")
	assert.Equal(t, "status_change", kinds[len(kinds)-1])
	assert.Equal(t, "completed", lines[len(lines)-1]["to"])
}

// A folder Agnx compacted after a snapshot: state.json stands for the
// events up to its checkpoint, the log for those after it.
func TestAgnxImport_Compacted(t *testing.T) {
	evs, skipped, err := runtime.ReadAgnxSession("testdata/agnx/compacted")
	require.NoError(t, err)
	assert.Zero(t, skipped)
	h := newHarness(t, llmtest.Echo())
	info, err := h.loop.ImportSession(context.Background(), evs)
	require.NoError(t, err)
	assert.Equal(t, 2, info.Turns)
	_, _, state := exportAgnx(t, info.ID, h.durable(info.ID))
	conv := state["conversation"].([]any)
	require.Len(t, conv, 6, "system messages are the agent's, not the session's")
	assert.Equal(t, "What is in notes.txt?", conv[0].(map[string]any)["content"])
	assert.Equal(t, "Nothing more.", conv[5].(map[string]any)["content"])

	_, _, err = runtime.ReadAgnxSession(t.TempDir())
	assert.ErrorContains(t, err, "holds neither events.jsonl nor state.json")
}

// The importer reads outside input: it never panics, and what it returns
// either imports or is refused with an error.
func FuzzAgnxImport(f *testing.F) {
	for _, s := range []string{
		`{"seq":1,"timestamp":"2026-01-02T10:00:00Z","type":"session_start","agent":"assistant"}`,
		`{"seq":2,"type":"assistant_response","agent":"a","content":"x","tool_calls":[{"call_id":"c","tool_name":"t","arguments":"{"}]}`,
		`{"seq":3,"type":"tool_call","call_id":"c","tool_name":"t","arguments":null}`,
		`{"seq":4,"type":"tools_skipped","call_ids":["c"],"reason":"r"}`,
		`{"seq":5,"type":"usage","usage":{"prompt_tokens":-1}}`,
		`{"type":"turn_end","status":"completed"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		start := []byte(`{"seq":1,"type":"session_start","agent":"assistant"}` + "\n")
		var l runtime.AgnxLog
		var n int64
		if l.ReadAgnxLog(bytes.NewReader(append(start, data...)), &n) != nil {
			return
		}
		evs := runtime.AgnxTurns(l.Events)
		require.NotEmpty(t, evs)
		var b bytes.Buffer
		w := runtime.NewAgnxWriter(&b)
		for _, e := range evs {
			require.NoError(t, w.Write(e))
		}
		_, err := w.State("s")
		require.NoError(t, err)
		for _, line := range bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n")) {
			require.True(t, json.Valid(line), "%s", line)
		}
	})
}
