package openai

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

var testServer = &llm.Server{Provider: "openai", Name: "OpenAI-compatible server", BaseURL: "http://127.0.0.1:8080/v1"}

// decodeAll runs the SSE decoder over a whole body.
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
			return d.response(), nil
		}
	}
}

func TestDecoder_DocsStream(t *testing.T) {
	body, err := os.ReadFile("testdata/tool_stream.sse")
	require.NoError(t, err)
	resp, err := decodeAll(body, nil)
	require.NoError(t, err)
	assert.Equal(t, []runtime.ToolCall{{ID: "call_abc", Name: "get_weather", Arguments: `{"location": "Paris"}`}}, resp.Message.ToolCalls)
	assert.Equal(t, runtime.Usage{PromptTokens: 82, CompletionTokens: 17}, resp.Usage)
	assert.Equal(t, "tool_calls", resp.StopReason)
}

func TestDecoder_Frames(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *runtime.Response
		kind runtime.ErrorKind
	}{
		{
			name: "multi-line data joined, CRLF, no final blank line",
			body: "data: {\"choices\":[{\"delta\":\r\ndata: {\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\r\n",
			want: &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant, Content: "a"}, StopReason: "stop"},
		},
		{
			name: "data without a space, other fields ignored",
			body: "retry: 10\nevent: x\ndata:{\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\ndata:[DONE]\n\n",
			want: &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant, Content: "b"}},
		},
		{
			name: "index-less fragments and every call at index 0",
			body: sse(`{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":""}}]},"finish_reason":"tool_calls"}]}`,
				"[DONE]"),
			want: &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant, ToolCalls: []runtime.ToolCall{
				{ID: "a", Name: "f", Arguments: `{"x":1}`}, {ID: "b", Name: "g", Arguments: `{}`},
			}}, StopReason: "tool_calls"},
		},
		{name: "ends without DONE or finish", body: sse(`{"choices":[{"delta":{"content":"c"}}]}`), kind: runtime.ErrInterrupted},
		{name: "error event", body: sse(`{"error":{"message":"Rate limit","code":429}}`), kind: runtime.ErrRateLimited},
		{name: "not JSON", body: sse(`<html>`), kind: runtime.ErrBadResponse},
		{name: "huge index", body: sse(`{"choices":[{"delta":{"tool_calls":[{"index":100000}]}}]}`), kind: runtime.ErrBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := decodeAll([]byte(tt.body), nil)
			if tt.want == nil {
				assert.True(t, runtime.IsProviderError(err, tt.kind), "%v", err)
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
		fmt.Fprintf(&b, "data: %s\n\n", e)
	}
	return b.String()
}

func FuzzSSE(f *testing.F) {
	files, err := filepath.Glob("testdata/*.sse")
	require.NoError(f, err)
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b)
	}
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

// stream200 is an SSE body of 200 content chunks, finish, usage, [DONE].
func stream200() []byte {
	var b bytes.Buffer
	const head = `{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,`
	for i := range 200 {
		fmt.Fprintf(&b, "data: %s\"delta\":{\"content\":\"token %d \"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", head, i)
	}
	fmt.Fprintf(&b, "data: %s\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}]}\n\n", head)
	b.WriteString(`data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":200,"total_tokens":219}}` + "\n\ndata: [DONE]\n\n")
	return b.Bytes()
}

func BenchmarkDecode200Chunks(b *testing.B) {
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

// A reasoning model (o-series, DeepSeek R1 through OpenAI-compatible
// servers) reports its thinking inside completion_tokens.
func TestDecoder_ReasoningTokens(t *testing.T) {
	body := `data: {"choices":[{"delta":{"content":"42"},"finish_reason":"stop"}]}` + "\n\n" +
		`data: {"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":250,"total_tokens":280,` +
		`"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":192}}}` + "\n\ndata: [DONE]\n\n"
	resp, err := decodeAll([]byte(body), nil)
	require.NoError(t, err)
	assert.Equal(t, runtime.Usage{PromptTokens: 30, CompletionTokens: 250, ReasoningTokens: 192}, resp.Usage)
}
