package ollama

import (
	"strconv"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
)

// encodeRequest appends the /api/chat body for req to dst. The body is
// built by hand: it is the hot path of every turn, and tool schemas and
// call arguments are raw JSON that encoding/json would re-parse.
func encodeRequest(dst []byte, req *runtime.Request) ([]byte, error) {
	dst = append(dst, `{"model":`...)
	dst = runtime.AppendJSONString(dst, req.Model)
	dst = append(dst, `,"stream":true,`...)
	dst = llm.AppendMessages(dst, req.System, req.Messages, appendMessage)
	if len(req.Tools) > 0 {
		var err error
		if dst, err = llm.AppendTools(dst, req.Tools); err != nil {
			return nil, err
		}
	}
	dst = appendOptions(dst, req)
	if req.KeepAlive != "" {
		dst = append(dst, `,"keep_alive":`...)
		dst = runtime.AppendJSONString(dst, req.KeepAlive)
	}
	return append(dst, '}'), nil
}

func appendMessage(dst []byte, m *runtime.Message) []byte {
	dst = append(dst, `{"role":`...)
	dst = runtime.AppendJSONString(dst, string(m.Role))
	dst = append(dst, `,"content":`...)
	dst = runtime.AppendJSONString(dst, m.Content)
	if m.Role == runtime.RoleTool && m.ToolName != "" {
		dst = append(dst, `,"tool_name":`...)
		dst = runtime.AppendJSONString(dst, m.ToolName)
	}
	if len(m.ToolCalls) > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"function":{"name":`...)
			dst = runtime.AppendJSONString(dst, tc.Name)
			dst = append(dst, `,"arguments":`...)
			// Ollama wants an object; arguments a model garbled are sent
			// as {} so one bad call cannot make every later request fail.
			if llm.IsObject(tc.Arguments) {
				dst = append(dst, tc.Arguments...)
			} else {
				dst = append(dst, '{', '}')
			}
			dst = append(dst, '}', '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

func appendOptions(dst []byte, req *runtime.Request) []byte {
	if req.Temperature == nil && req.MaxOutputTokens <= 0 && req.ContextTokens <= 0 {
		return dst
	}
	dst = append(dst, `,"options":{`...)
	sep := false
	field := func(name string) {
		if sep {
			dst = append(dst, ',')
		}
		sep = true
		dst = append(dst, name...)
	}
	if req.Temperature != nil {
		field(`"temperature":`)
		dst = llm.AppendFloat(dst, *req.Temperature)
	}
	if req.MaxOutputTokens > 0 {
		field(`"num_predict":`)
		dst = strconv.AppendInt(dst, int64(req.MaxOutputTokens), 10)
	}
	if req.ContextTokens > 0 {
		field(`"num_ctx":`)
		dst = strconv.AppendInt(dst, int64(req.ContextTokens), 10)
	}
	return append(dst, '}')
}
