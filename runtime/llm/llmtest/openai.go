package llmtest

import (
	"encoding/json"
	"strconv"
	"time"
)

// The OpenAI chat.completion.chunk stream: "data: {json}\n\n" events, the
// first delta carries the role, tool calls arrive as fragments keyed by
// index (id, type and name in the first, arguments in pieces), then a
// chunk with finish_reason, then (with stream_options.include_usage) a
// chunk with empty choices and the usage, then "data: [DONE]".
type openaiChunk struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []openaiChoice `json:"choices"`
	Usage   *openaiUsage   `json:"usage,omitempty"`
}

type openaiChoice struct {
	Index        int         `json:"index"`
	Delta        openaiDelta `json:"delta"`
	Logprobs     *struct{}   `json:"logprobs"`
	FinishReason *string     `json:"finish_reason"`
}

type openaiDelta struct {
	Role             string           `json:"role,omitempty"`
	Content          *string          `json:"content,omitempty"`
	ReasoningContent string           `json:"reasoning_content,omitempty"`
	ToolCalls        []openaiToolCall `json:"tool_calls,omitempty"`
}

type openaiToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type openaiUsage struct {
	PromptTokens     int                   `json:"prompt_tokens"`
	CompletionTokens int                   `json:"completion_tokens"`
	TotalTokens      int                   `json:"total_tokens"`
	Details          *openaiCompletionInfo `json:"completion_tokens_details,omitempty"`
}

// openaiCompletionInfo is usage.completion_tokens_details, sent by
// reasoning models.
type openaiCompletionInfo struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// openaiFrames renders rep as SSE events, and the event of an in-stream
// error. Calls without an ID get "call_<n>".
func openaiFrames(rec RecordedRequest, rep Reply) (frames [][]byte, errFrame []byte) {
	created := time.Now().Unix()
	chunk := func(d openaiDelta, finish *string) openaiChunk {
		return openaiChunk{
			ID: "chatcmpl-llmtest", Object: "chat.completion.chunk", Created: created, Model: rec.Model,
			Choices: []openaiChoice{{Delta: d, FinishReason: finish}},
		}
	}
	empty := ""
	frames = append(frames, event(chunk(openaiDelta{Role: "assistant", Content: &empty}, nil)))
	for _, p := range split(rep.Thinking, 0) {
		frames = append(frames, event(chunk(openaiDelta{ReasoningContent: p}, nil)))
	}
	pieces := split(rep.Text, rep.Chunks)
	for _, p := range pieces {
		if p != "" {
			frames = append(frames, event(chunk(openaiDelta{Content: &p}, nil)))
		}
	}
	for i, c := range rep.ToolCalls {
		frames = append(frames, toolFrames(chunk, i, c, rep.ArgChunks)...)
	}
	stop := rep.StopReason
	if stop == "" {
		stop = "stop"
		if len(rep.ToolCalls) > 0 {
			stop = "tool_calls"
		}
	}
	frames = append(frames, event(chunk(openaiDelta{}, &stop)))
	if rec.IncludeUsage {
		u := usage(rec, rep, len(pieces))
		c := chunk(openaiDelta{}, nil)
		c.Choices = []openaiChoice{}
		c.Usage = &openaiUsage{PromptTokens: u.Prompt, CompletionTokens: u.Completion, TotalTokens: u.Prompt + u.Completion}
		if u.Reasoning > 0 {
			c.Usage.Details = &openaiCompletionInfo{ReasoningTokens: u.Reasoning}
		}
		frames = append(frames, event(c))
	}
	frames = append(frames, []byte("data: [DONE]\n\n"))
	errEv := map[string]any{"error": map[string]any{"message": errorMessage(rep), "code": 500}}
	return frames, event(errEv)
}

func toolFrames(chunk func(openaiDelta, *string) openaiChunk, i int, c ToolCall, n int) [][]byte {
	if n <= 0 {
		n = 3
	}
	id := c.ID
	if id == "" {
		id = "call_" + strconv.Itoa(i+1)
	}
	var first openaiToolCall
	first.Index, first.ID, first.Type = i, id, "function"
	first.Function.Name = c.Name
	frames := [][]byte{event(chunk(openaiDelta{ToolCalls: []openaiToolCall{first}}, nil))}
	for _, frag := range split(c.Arguments, n) {
		var tc openaiToolCall
		tc.Index = i
		tc.Function.Arguments = frag
		frames = append(frames, event(chunk(openaiDelta{ToolCalls: []openaiToolCall{tc}}, nil)))
	}
	return frames
}

func event(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	out := make([]byte, 0, len(b)+8)
	out = append(out, "data: "...)
	out = append(out, b...)
	return append(out, '\n', '\n')
}
