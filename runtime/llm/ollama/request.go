package ollama

import (
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
)

// encodeRequest appends the /api/chat body for req to dst. The body is
// built by hand: it is the hot path of every turn, and tool schemas and
// call arguments are raw JSON that encoding/json would re-parse.
func encodeRequest(dst []byte, req *runtime.Request) ([]byte, error) {
	w := jsonw.Writer{B: dst}
	w.Object()
	w.Key("model").String(req.Model)
	w.Key("stream").Bool(true)
	llm.WriteMessages(&w, req.System, req.Messages, writeMessage)
	if len(req.Tools) > 0 {
		if err := llm.WriteTools(&w, req.Tools); err != nil {
			return nil, err
		}
	}
	writeOptions(&w, req)
	w.OptString("keep_alive", req.KeepAlive)
	return w.EndObject().B, nil
}

func writeMessage(w *jsonw.Writer, m *runtime.Message) {
	w.Object()
	w.Key("role").String(string(m.Role))
	w.Key("content").String(m.Content)
	if m.Role == runtime.RoleTool {
		w.OptString("tool_name", m.ToolName)
	}
	if len(m.ToolCalls) > 0 {
		w.Key("tool_calls").Array()
		for _, tc := range m.ToolCalls {
			w.Object().Key("function").Object()
			w.Key("name").String(tc.Name)
			// Ollama wants an object; arguments a model garbled are sent
			// as {} so one bad call cannot make every later request fail.
			if llm.IsObject(tc.Arguments) {
				w.Key("arguments").RawString(tc.Arguments)
			} else {
				w.Key("arguments").Object().EndObject()
			}
			w.EndObject().EndObject()
		}
		w.EndArray()
	}
	w.EndObject()
}

func writeOptions(w *jsonw.Writer, req *runtime.Request) {
	if req.Temperature == nil && req.MaxOutputTokens <= 0 && req.ContextTokens <= 0 {
		return
	}
	w.Key("options").Object()
	if req.Temperature != nil {
		w.Key("temperature").Float(*req.Temperature)
	}
	if req.MaxOutputTokens > 0 {
		w.Key("num_predict").Int(int64(req.MaxOutputTokens))
	}
	if req.ContextTokens > 0 {
		w.Key("num_ctx").Int(int64(req.ContextTokens))
	}
	w.EndObject()
}
