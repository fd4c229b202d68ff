package llmtest

import (
	"encoding/json"
	"strconv"
)

// The Messages API stream: "event: <type>\ndata: {json}\n\n" events.
// message_start carries the input usage, a ping follows, each content
// block has content_block_start, its deltas (text_delta, input_json_delta
// fragments of the tool input, thinking_delta then signature_delta) and
// content_block_stop, then message_delta with stop_reason and the output
// usage, then message_stop.

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// anthropicFrames renders rep as SSE events, and the event of an in-stream
// error (an overloaded_error unless ErrorMessage says otherwise). A reply
// that stops for max_tokens with tool calls cuts the last call's input in
// half, as the API does.
func anthropicFrames(rec RecordedRequest, rep Reply) (frames [][]byte, errFrame []byte) {
	u := usage(rec, rep, len(split(rep.Text, rep.Chunks)))
	in := max(u.Prompt-u.CacheRead-u.CacheWrite, 0)
	frames = append(frames, sseEvent("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_llmtest", "type": "message", "role": "assistant", "content": []any{}, "model": rec.Model,
		"stop_reason": nil, "stop_sequence": nil,
		"usage": anthropicUsage{InputTokens: in, CacheCreationInputTokens: u.CacheWrite, CacheReadInputTokens: u.CacheRead, OutputTokens: 1},
	}}))
	frames = append(frames, sseEvent("ping", map[string]string{"type": "ping"}))
	idx := 0
	block := func(start any, deltas []any) {
		frames = append(frames, sseEvent("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": start}))
		for _, d := range deltas {
			frames = append(frames, sseEvent("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": d}))
		}
		frames = append(frames, sseEvent("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	if rep.Thinking != "" {
		var deltas []any
		for _, p := range split(rep.Thinking, 0) {
			deltas = append(deltas, map[string]string{"type": "thinking_delta", "thinking": p})
		}
		sig := rep.Signature
		if sig == "" {
			sig = "llmtest-signature-" + strconv.Itoa(len(rep.Thinking))
		}
		deltas = append(deltas, map[string]string{"type": "signature_delta", "signature": sig})
		block(map[string]string{"type": "thinking", "thinking": "", "signature": ""}, deltas)
	}
	if rep.Text != "" {
		var deltas []any
		for _, p := range split(rep.Text, rep.Chunks) {
			deltas = append(deltas, map[string]string{"type": "text_delta", "text": p})
		}
		block(map[string]string{"type": "text", "text": ""}, deltas)
	}
	stop := anthropicStop(rep)
	for i, c := range rep.ToolCalls {
		args := c.Arguments
		if stop == "max_tokens" && i == len(rep.ToolCalls)-1 {
			args = args[:len(args)/2]
		}
		id := c.ID
		if id == "" {
			id = "toolu_llmtest_" + strconv.Itoa(i+1)
		}
		n := rep.ArgChunks
		if n <= 0 {
			n = 3
		}
		deltas := []any{map[string]string{"type": "input_json_delta", "partial_json": ""}}
		for _, frag := range split(args, n) {
			deltas = append(deltas, map[string]string{"type": "input_json_delta", "partial_json": frag})
		}
		block(map[string]any{"type": "tool_use", "id": id, "name": c.Name, "input": map[string]any{}}, deltas)
	}
	frames = append(frames, sseEvent("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": u.Completion}}))
	frames = append(frames, sseEvent("message_stop", map[string]string{"type": "message_stop"}))
	errType := "overloaded_error"
	if rep.ErrorMessage != "" {
		errType = "api_error"
	}
	errEv := map[string]any{"type": "error", "error": map[string]string{"type": errType, "message": errorMessage(rep)}}
	return frames, sseEvent("error", errEv)
}

func anthropicStop(rep Reply) string {
	switch {
	case rep.StopReason != "":
		return rep.StopReason
	case len(rep.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func sseEvent(name string, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	out := make([]byte, 0, len(b)+len(name)+16)
	out = append(out, "event: "...)
	out = append(out, name...)
	out = append(out, "\ndata: "...)
	out = append(out, b...)
	return append(out, '\n', '\n')
}

// anthropicErrorType is the error.type of an error response's status.
func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}
