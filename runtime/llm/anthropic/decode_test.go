package anthropic

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
)

var testServer = &llm.Server{Provider: "anthropic", Name: "Anthropic API", BaseURL: DefaultBaseURL}

// decodeAll runs the decoder over a whole body.
func decodeAll(body []byte, onDelta func(runtime.Delta)) (*runtime.Response, error) {
	d := newDecoder(testServer, onDelta)
	lr := llm.NewLineReader(bytes.NewReader(body), 0)
	for {
		line, err := lr.ReadLine()
		if err != nil {
			return d.end()
		}
		done, err := d.line(line)
		if err != nil {
			return nil, err
		}
		if done {
			return d.response()
		}
	}
}

func readFile(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

func TestDecoder_DocsStreams(t *testing.T) {
	var text, think []string
	rec := func(d runtime.Delta) {
		if d.Text != "" {
			text = append(text, d.Text)
		}
		if d.Thinking != "" {
			think = append(think, d.Thinking)
		}
	}
	resp, err := decodeAll(readFile(t, "text_stream.sse"), rec)
	require.NoError(t, err)
	assert.Equal(t, []string{"Hello", "!"}, text)
	assert.Equal(t, &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant, Content: "Hello!"},
		Usage: runtime.Usage{PromptTokens: 25, CompletionTokens: 15}, StopReason: "end_turn"}, resp)

	resp, err = decodeAll(readFile(t, "tool_stream.sse"), nil)
	require.NoError(t, err)
	assert.Equal(t, "Okay, let's check the weather for San Francisco, CA:", resp.Message.Content)
	assert.Equal(t, []runtime.ToolCall{{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather",
		Arguments: `{"location": "San Francisco, CA", "unit": "fahrenheit"}`}}, resp.Message.ToolCalls)
	assert.Equal(t, runtime.Usage{PromptTokens: 472 + 1200 + 3000, CompletionTokens: 89,
		CacheWriteTokens: 1200, CacheReadTokens: 3000}, resp.Usage, "cached parts count in the prompt")
	assert.Equal(t, "tool_use", resp.StopReason)

	text, think = nil, nil
	resp, err = decodeAll(readFile(t, "thinking_stream.sse"), rec)
	require.NoError(t, err)
	assert.Equal(t, "The greatest common divisor of 1071 and 462 is **21**.", resp.Message.Content, "thinking stays out")
	assert.Len(t, think, 2)
	require.Len(t, resp.Message.Thinking, 2)
	assert.Contains(t, resp.Message.Thinking[0].Text, "So GCD is 21.")
	assert.Equal(t, "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds", resp.Message.Thinking[0].Signature)
	assert.Equal(t, runtime.ThinkingBlock{Redacted: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}, resp.Message.Thinking[1])
}

func TestDecoder_Frames(t *testing.T) {
	start := `{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}`
	tool := `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}`
	tests := []struct {
		name string
		body string
		want *runtime.Response
		kind runtime.ErrorKind
		msg  string
	}{
		{
			name: "tool without input fragments, stop without message_stop",
			body: sse(start, tool, `{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":3}}`),
			want: &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant,
				ToolCalls: []runtime.ToolCall{{ID: "t1", Name: "f", Arguments: "{}"}}},
				Usage: runtime.Usage{PromptTokens: 5, CompletionTokens: 3}, StopReason: "tool_use"},
		},
		{
			name: "max_tokens in a tool call",
			body: sse(start, tool, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"/et"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":8}}`, `{"type":"message_stop"}`),
			kind: runtime.ErrBadRequest, msg: `while writing a call to the tool "f", so the call was not run: raise spec.model.max_output_tokens`,
		},
		{
			name: "overloaded mid-stream",
			body: sse(start, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			kind: runtime.ErrServer, msg: "is overloaded and stopped mid-answer (Overloaded)",
		},
		{
			name: "rate limited mid-stream",
			body: sse(start, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`),
			kind: runtime.ErrRateLimited,
		},
		{
			name: "input sent whole at the start (compatible servers)",
			body: sse(start, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{"a":[1,"x"]}}}`,
				`{"type":"content_block_stop","index":0}`, `{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`),
			want: &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant,
				ToolCalls: []runtime.ToolCall{{ID: "t1", Name: "f", Arguments: `{"a":[1,"x"]}`}}},
				Usage: runtime.Usage{PromptTokens: 5, CompletionTokens: 1}, StopReason: "tool_use"},
		},
		{name: "ends early", body: sse(start, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"a"}}`), kind: runtime.ErrInterrupted},
		{name: "delta before start", body: sse(start, `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`), kind: runtime.ErrBadResponse},
		{name: "huge index", body: sse(start, `{"type":"content_block_start","index":100000,"content_block":{"type":"text"}}`), kind: runtime.ErrBadResponse},
		{name: "tool without a name", body: sse(start, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"x"}}`), kind: runtime.ErrBadResponse},
		{name: "not JSON", body: sse(`<html>`), kind: runtime.ErrBadResponse},
		{
			name: "unknown events and blocks are skipped",
			body: sse(start, `{"type":"future_event"}`, `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}`,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2,"input_tokens":6}}`, `{"type":"message_stop"}`),
			want: &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant},
				Usage: runtime.Usage{PromptTokens: 6, CompletionTokens: 2}, StopReason: "end_turn"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := decodeAll([]byte(tt.body), nil)
			if tt.want == nil {
				assert.True(t, runtime.IsProviderError(err, tt.kind), "%v", err)
				if tt.msg != "" {
					assert.ErrorContains(t, err, tt.msg)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp)
		})
	}
}

func sse(events ...string) string {
	var b bytes.Buffer
	for _, e := range events {
		fmt.Fprintf(&b, "event: x\ndata: %s\n\n", e)
	}
	return b.String()
}

func FuzzAnthropicStream(f *testing.F) {
	files, err := filepath.Glob("testdata/*.sse")
	require.NoError(f, err)
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(sse(`{"type":"content_block_start","index":0,"content_block":{"type":"thinking"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"max_tokens"}}`)))
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := decodeAll(body, func(runtime.Delta) {})
		if err != nil {
			var pe *runtime.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ProviderError: %v", err)
			}
			return
		}
		for _, c := range resp.Message.ToolCalls {
			if c.ID == "" || c.Name == "" || c.Arguments == "" {
				t.Fatalf("bad call %+v", c)
			}
		}
	})
}

// stream200 is a real-shaped body: message_start, ping, 200 text deltas,
// message_delta, message_stop.
func stream200() []byte {
	var b bytes.Buffer
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01XFDUDYJgAACzvnptvVoYEL\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5-20250929\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":19,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	b.WriteString("event: ping\ndata: {\"type\": \"ping\"}\n\n")
	for i := range 200 {
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"token %d \"}}\n\n", i)
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":200}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.Bytes()
}

func BenchmarkParse200Chunks(b *testing.B) {
	body := stream200()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := decodeAll(body, func(runtime.Delta) {})
		if err != nil || resp.Usage.CompletionTokens != 200 {
			b.Fatal(resp, err)
		}
	}
}
