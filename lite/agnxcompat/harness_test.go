package agnxcompat

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The harness's own tests: the ported parser and consumer against
// hand-written chunk sequences of §7.

// chunks is a chunkSource over fixed chunks.
type chunks [][]byte

func (c *chunks) nextChunk() ([]byte, error) {
	if len(*c) == 0 {
		return nil, io.EOF
	}
	b := (*c)[0]
	*c = (*c)[1:]
	return b, nil
}

func src(parts ...string) *chunks {
	c := chunks{}
	for _, p := range parts {
		c = append(c, []byte(p))
	}
	return &c
}

func kinds(evs []clientEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

func TestParser_WholeStream(t *testing.T) {
	r := consumeStream(src(
		"event: start\ndata: {}\n\n",
		": keep-alive\n\n",
		"event: token\r\ndata: {\"content\":\"Hel\"}\r\n\r\n",
		"event:token\ndata:{\"content\":\" lo\",\"extra\":1}\n\n",
		"event: done\ndata: {\"message_id\":\"msg_1\",\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}\n\n",
	), false)
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"start", "token", "token", "done"}, kinds(r.Events))
	assert.Equal(t, "Hel", r.Events[1].Content)
	assert.Equal(t, " lo", r.Events[2].Content, "one space stripped, the rest verbatim")
	require.NotNil(t, r.Events[3].Usage)
	assert.Equal(t, uint32(3), *r.Events[3].Usage.TotalTokens)
}

func TestParser_EventSplitAcrossChunks(t *testing.T) {
	r := consumeStream(src("event: to", "ken\ndata: {\"content\":", "\"x\"}\n", "\nevent: done\ndata: {\"message_id\":\"m\",\"usage\":null}\n\n"), false)
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"token", "done"}, kinds(r.Events))
}

func TestParser_InvalidUTF8ChunkDropped(t *testing.T) {
	// "é" is C3 A9: split across two flushes, each half is invalid alone
	// and dropped, so the token loses its text and its closing quote.
	r := consumeStream(src("event: token\ndata: {\"content\":\"caf\xc3", "\xa9\"}\n\n", "event: done\ndata: {\"message_id\":\"m\"}\n\n"), false)
	assert.Equal(t, 2, r.Dropped)
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"done"}, kinds(r.Events), "the token vanished silently: why §7 wants whole events per flush")
}

func TestParser_IDOnlyBlockAborts(t *testing.T) {
	r := consumeStream(src("event: start\ndata: {}\n\n", "id: 7\n\n", "event: done\ndata: {\"message_id\":\"m\"}\n\n"), false)
	var pe *sseParseError
	require.ErrorAs(t, r.Err, &pe)
	assert.Contains(t, pe.msg, "Unknown event type: ")
	assert.Equal(t, []string{"start"}, kinds(r.Events))
}

func TestParser_RetryOnlyBlockAborts(t *testing.T) {
	r := consumeStream(src("retry: 1000\n\n"), false)
	var pe *sseParseError
	require.ErrorAs(t, r.Err, &pe)
}

func TestParser_BadRetryIsComment(t *testing.T) {
	r := consumeStream(src("retry: soon\n\nevent: done\ndata: {\"message_id\":\"m\"}\n\n"), false)
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"done"}, kinds(r.Events))
}

func TestParser_IDJoinsABlockWithEventAndData(t *testing.T) {
	r := consumeStream(src("id: 3\nevent: done\nretry: 10\ndata: {\"message_id\":\"m\"}\n\n"), false)
	require.NoError(t, r.Err, "§7 extension: id:/retry: may join a block with event: and data:")
}

func TestParser_BlockWithoutEventAborts(t *testing.T) {
	r := consumeStream(src("data: {\"content\":\"x\"}\n\n"), false)
	var pe *sseParseError
	require.ErrorAs(t, r.Err, &pe)
}

func TestParser_UnknownEventAborts(t *testing.T) {
	r := consumeStream(src("event: start\ndata: {}\n\n", "event: tool_call\ndata: {\"name\":\"bash\"}\n\n"), false)
	var pe *sseParseError
	require.ErrorAs(t, r.Err, &pe)
	assert.Contains(t, pe.msg, "Unknown event type: tool_call")
}

func TestParser_DataNotMatchingTableAborts(t *testing.T) {
	for name, data := range map[string]string{
		"token without content":      `{"text":"x"}`,
		"token content not a string": `{"content":1}`,
		"done without message_id":    `{"usage":null}`,
		"done usage negative":        `{"message_id":"m","usage":{"prompt_tokens":-1,"completion_tokens":0,"total_tokens":0}}`,
		"done usage missing a count": `{"message_id":"m","usage":{"prompt_tokens":1,"completion_tokens":0}}`,
		"error without message":      `{"error":"x"}`,
		"approval without command":   `{"call_id":"c"}`,
		"not JSON":                   `hello`,
	} {
		t.Run(name, func(t *testing.T) {
			ev := map[string]string{"token without content": "token", "token content not a string": "token",
				"error without message": "error", "approval without command": "approval_required", "not JSON": "token"}[name]
			if ev == "" {
				ev = "done"
			}
			r := consumeStream(src("event: "+ev+"\ndata: "+data+"\n\n"), false)
			var pe *sseParseError
			require.ErrorAs(t, r.Err, &pe)
		})
	}
}

func TestParser_StartAndCancelledDataNotParsed(t *testing.T) {
	r := consumeStream(src("event: start\ndata: whatever\n\nevent: cancelled\ndata:\n\n"), false)
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"start", "cancelled"}, kinds(r.Events))
}

func TestParser_EOFWithoutTerminalIsStreamEnded(t *testing.T) {
	r := consumeStream(src("event: start\ndata: {}\n\nevent: token\ndata: {\"content\":\"x\"}\n\n"), false)
	require.ErrorIs(t, r.Err, errSSEStreamEnded)
	r = consumeStream(src("event: start\ndata: {}\n\nevent: approval_required\ndata: {\"call_id\":\"c\",\"command\":\"ls\"}\n\n"), false)
	require.ErrorIs(t, r.Err, errSSEStreamEnded, "approval_required is not terminal for the parent's stream task")
}

func TestParser_EOFFlushesTheLastBlock(t *testing.T) {
	r := consumeStream(src("event: done\ndata: {\"message_id\":\"m\"}"), false)
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"done"}, kinds(r.Events))
}

func TestParser_LikeCLIStopsAtApproval(t *testing.T) {
	c := src("event: start\ndata: {}\n\n", "event: approval_required\ndata: {\"call_id\":\"c\",\"command\":\"ls\"}\n\n", "garbage\n")
	r := consumeStream(c, true)
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"start", "approval_required"}, kinds(r.Events))
	assert.Len(t, *c, 1, "the CLI reads no further")
}

func TestDecodeStrict(t *testing.T) {
	var s getSessionResponse
	require.NoError(t, decodeStrict([]byte(`{"session_id":"s","agent":"a","status":"active","created_at":"t","x":1}`), &s))
	assert.ErrorContains(t, decodeStrict([]byte(`{"session_id":"s","agent":"a","status":"idle","created_at":"t"}`), &s), "unknown variant")
	var s2 getSessionResponse
	assert.ErrorContains(t, decodeStrict([]byte(`{"session_id":"s","status":"active","created_at":"t"}`), &s2), "missing field `agent`")
	var l listSessionsResponse
	assert.ErrorContains(t, decodeStrict([]byte(`{"sessions":[{"session_id":"s","agent":"a","status":"active"}]}`), &l), "sessions[0].created_at")
	var a approveResponse
	assert.Error(t, decodeStrict([]byte(`{"status":"done","message_id":"m","content":"c"}`), &a))
	assert.Error(t, decodeStrict([]byte(`{"status":"complete","content":"c"}`), &a))
}

func TestParseError_Fallbacks(t *testing.T) {
	e := parseError(httpResult{Status: 404, Body: []byte(`{"type":"t","title":"Not Found","status":404,"detail":"no pending approval"}`)})
	assert.Equal(t, "api error (404): no pending approval", e.Error())
	e = parseError(httpResult{Status: 404, Body: []byte(`{"title":"Not Found"}`)})
	assert.Equal(t, "api error (404): Not Found", e.Error())
	e = parseError(httpResult{Status: 401})
	assert.Equal(t, "api error (401): HTTP 401", e.Error())
	var ae *apiError
	assert.True(t, errors.As(e, &ae))
}
