package llmtest

import (
	"encoding/json"
	"time"
)

// Ollama's /api/chat stream: one JSON object per line; the last has
// "done": true, the reason and the token counts. Tool calls come whole,
// in one chunk, with arguments as an object.
type ollamaChunk struct {
	Model      string        `json:"model"`
	CreatedAt  string        `json:"created_at"`
	Message    ollamaMessage `json:"message"`
	DoneReason string        `json:"done_reason,omitempty"`
	Done       bool          `json:"done"`

	TotalDuration      int64 `json:"total_duration,omitempty"`
	LoadDuration       int64 `json:"load_duration,omitempty"`
	PromptEvalCount    int   `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration int64 `json:"prompt_eval_duration,omitempty"`
	EvalCount          int   `json:"eval_count,omitempty"`
	EvalDuration       int64 `json:"eval_duration,omitempty"`
}

type ollamaMessage struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	Thinking  string           `json:"thinking,omitempty"`
	ToolCalls []ollamaToolCall `json:"tool_calls,omitempty"`
}

type ollamaToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int             `json:"index"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// ollamaFrames renders rep as NDJSON lines, and the line of an in-stream
// error. A ToolCall.ID is sent only when set, like newer Ollama versions;
// older ones send none.
func ollamaFrames(rec RecordedRequest, rep Reply) (frames [][]byte, errFrame []byte) {
	created := time.Now().UTC().Format(time.RFC3339Nano)
	chunk := func(m ollamaMessage) ollamaChunk {
		m.Role = "assistant"
		return ollamaChunk{Model: rec.Model, CreatedAt: created, Message: m}
	}
	for _, p := range split(rep.Thinking, 0) {
		frames = append(frames, line(chunk(ollamaMessage{Thinking: p})))
	}
	pieces := split(rep.Text, rep.Chunks)
	for _, p := range pieces {
		if p != "" {
			frames = append(frames, line(chunk(ollamaMessage{Content: p})))
		}
	}
	if len(rep.ToolCalls) > 0 {
		m := ollamaMessage{}
		for i, c := range rep.ToolCalls {
			var tc ollamaToolCall
			tc.ID = c.ID
			tc.Function.Index, tc.Function.Name = i, c.Name
			tc.Function.Arguments = rawArgs(c.Arguments)
			m.ToolCalls = append(m.ToolCalls, tc)
		}
		frames = append(frames, line(chunk(m)))
	}
	u := usage(rec, rep, len(pieces))
	final := chunk(ollamaMessage{})
	final.Done, final.DoneReason = true, rep.StopReason
	if final.DoneReason == "" {
		final.DoneReason = "stop"
	}
	final.TotalDuration, final.LoadDuration = 1_500_000_000, 20_000_000
	final.PromptEvalCount, final.PromptEvalDuration = u.Prompt, 300_000_000
	final.EvalCount, final.EvalDuration = u.Completion, 1_000_000_000
	frames = append(frames, line(final))
	return frames, line(map[string]string{"error": errorMessage(rep)})
}

// rawArgs sends valid JSON as is and anything else as a JSON string, so a
// test can script a model that garbles its arguments.
func rawArgs(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

func line(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

func usage(rec RecordedRequest, rep Reply, pieces int) Usage {
	if rep.Usage != (Usage{}) {
		return rep.Usage
	}
	return Usage{Prompt: len(rec.Raw)/4 + 1, Completion: pieces + len(rep.ToolCalls)*8 + 1}
}

func errorMessage(rep Reply) string {
	if rep.ErrorMessage != "" {
		return rep.ErrorMessage
	}
	return "llmtest: scripted stream error"
}
