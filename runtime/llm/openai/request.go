package openai

import (
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
)

// encodeRequest appends the /chat/completions body for req to dst. It is
// built by hand for the same reasons as Ollama's: hot path, raw schemas.
// max_tokens (not max_completion_tokens) is sent because local servers
// only know the older name.
func encodeRequest(dst []byte, req *runtime.Request) ([]byte, error) {
	w := jsonw.Writer{B: dst}
	w.Object()
	w.Key("model").String(req.Model)
	w.Key("stream").Bool(true)
	w.Key("stream_options").Object().Key("include_usage").Bool(true).EndObject()
	llm.WriteMessages(&w, req.System, req.Messages, writeMessage)
	if len(req.Tools) > 0 {
		if err := llm.WriteTools(&w, req.Tools); err != nil {
			return nil, err
		}
	}
	if req.Temperature != nil {
		w.Key("temperature").Float(*req.Temperature)
	}
	if req.MaxOutputTokens > 0 {
		w.Key("max_tokens").Int(int64(req.MaxOutputTokens))
	}
	return w.EndObject().B, nil
}

func writeMessage(w *jsonw.Writer, m *runtime.Message) {
	w.Object()
	w.Key("role").String(string(m.Role))
	if m.Content == "" && len(m.ToolCalls) > 0 {
		w.Key("content").Null()
	} else {
		w.Key("content").String(m.Content)
	}
	if m.Role == runtime.RoleTool {
		w.Key("tool_call_id").String(m.ToolCallID)
	}
	if len(m.ToolCalls) > 0 {
		w.Key("tool_calls").Array()
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if args == "" {
				args = "{}"
			}
			w.Object()
			w.Key("id").String(tc.ID)
			w.Key("type").String("function")
			w.Key("function").Object().Key("name").String(tc.Name).Key("arguments").String(args).EndObject()
			w.EndObject()
		}
		w.EndArray()
	}
	w.EndObject()
}
