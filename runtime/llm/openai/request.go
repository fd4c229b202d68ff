package openai

import (
	"strconv"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
)

// encodeRequest appends the /chat/completions body for req to dst. It is
// built by hand for the same reasons as Ollama's: hot path, raw schemas.
// max_tokens (not max_completion_tokens) is sent because local servers
// only know the older name.
func encodeRequest(dst []byte, req *runtime.Request) ([]byte, error) {
	dst = append(dst, `{"model":`...)
	dst = runtime.AppendJSONString(dst, req.Model)
	dst = append(dst, `,"stream":true,"stream_options":{"include_usage":true},`...)
	dst = llm.AppendMessages(dst, req.System, req.Messages, appendMessage)
	if len(req.Tools) > 0 {
		var err error
		if dst, err = llm.AppendTools(dst, req.Tools); err != nil {
			return nil, err
		}
	}
	if req.Temperature != nil {
		dst = append(dst, `,"temperature":`...)
		dst = llm.AppendFloat(dst, *req.Temperature)
	}
	if req.MaxOutputTokens > 0 {
		dst = append(dst, `,"max_tokens":`...)
		dst = strconv.AppendInt(dst, int64(req.MaxOutputTokens), 10)
	}
	return append(dst, '}'), nil
}

func appendMessage(dst []byte, m *runtime.Message) []byte {
	dst = append(dst, `{"role":`...)
	dst = runtime.AppendJSONString(dst, string(m.Role))
	dst = append(dst, `,"content":`...)
	if m.Content == "" && len(m.ToolCalls) > 0 {
		dst = append(dst, "null"...)
	} else {
		dst = runtime.AppendJSONString(dst, m.Content)
	}
	if m.Role == runtime.RoleTool {
		dst = append(dst, `,"tool_call_id":`...)
		dst = runtime.AppendJSONString(dst, m.ToolCallID)
	}
	if len(m.ToolCalls) > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = runtime.AppendJSONString(dst, tc.ID)
			dst = append(dst, `,"type":"function","function":{"name":`...)
			dst = runtime.AppendJSONString(dst, tc.Name)
			dst = append(dst, `,"arguments":`...)
			args := tc.Arguments
			if args == "" {
				args = "{}"
			}
			dst = runtime.AppendJSONString(dst, args)
			dst = append(dst, '}', '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}
