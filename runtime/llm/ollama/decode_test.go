package ollama

import (
	"bufio"
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

var testServer = &llm.Server{Provider: "ollama", Name: "Ollama", BaseURL: "http://127.0.0.1:11434"}

// decodeAll runs the decoder over a whole NDJSON body.
func decodeAll(body []byte, onDelta func(runtime.Delta)) (*runtime.Response, error) {
	d := newDecoder(testServer, onDelta)
	lr := llm.NewLineReader(bytes.NewReader(body), 0)
	for {
		line, err := lr.ReadLine()
		if err != nil {
			return nil, err
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
	body, err := os.ReadFile("testdata/tool_stream.ndjson")
	require.NoError(t, err)
	var thinking string
	resp, err := decodeAll(body, func(d runtime.Delta) { thinking += d.Thinking })
	require.NoError(t, err)
	assert.Equal(t, "The user wants the weather.", thinking)
	require.Len(t, resp.Message.ToolCalls, 1)
	assert.Equal(t, "get_current_weather", resp.Message.ToolCalls[0].Name)
	assert.JSONEq(t, `{"format":"celsius","location":"Toronto"}`, resp.Message.ToolCalls[0].Arguments)
	assert.Equal(t, runtime.Usage{PromptTokens: 250, CompletionTokens: 42}, resp.Usage)
}

func FuzzOllamaChunk(f *testing.F) {
	files, err := filepath.Glob("testdata/*.ndjson")
	require.NoError(f, err)
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			f.Add(append([]byte(nil), sc.Bytes()...))
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		d := newDecoder(testServer, nil)
		if _, err := d.line(line); err != nil {
			var pe *runtime.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ProviderError: %v", err)
			}
			return
		}
		r := d.response()
		for _, c := range r.Message.ToolCalls {
			if !llm.IsObject(c.Arguments) || c.ID == "" || c.Name == "" {
				t.Fatalf("bad call %+v", c)
			}
		}
	})
}

// stream200 is an NDJSON body of 200 text chunks and a done chunk.
func stream200() []byte {
	var b bytes.Buffer
	for i := range 200 {
		fmt.Fprintf(&b, `{"model":"qwen3:4b","created_at":"2025-05-27T22:54:57.641643Z","message":{"role":"assistant","content":"token %d "},"done":false}`+"\n", i)
	}
	b.WriteString(`{"model":"qwen3:4b","created_at":"2025-05-27T22:54:58.618504Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":3244602250,"load_duration":1079744208,"prompt_eval_count":250,"prompt_eval_duration":1286839708,"eval_count":200,"eval_duration":876722333}` + "\n")
	return b.Bytes()
}

func BenchmarkDecode200Chunks(b *testing.B) {
	body := stream200()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeAll(body, func(runtime.Delta) {}); err != nil {
			b.Fatal(err)
		}
	}
}
