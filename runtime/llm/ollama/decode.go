package ollama

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
)

// decoder turns NDJSON chunks into deltas and one final response. One
// decoder serves one stream; its parser and buffers are reused per line.
type decoder struct {
	srv     *llm.Server
	onDelta func(runtime.Delta)
	p       fastjson.Parser
	content strings.Builder
	calls   []runtime.ToolCall
	args    []byte
	ids     llm.CallIDs
	usage   runtime.Usage
	stop    string
}

func newDecoder(srv *llm.Server, onDelta func(runtime.Delta)) *decoder {
	if onDelta == nil {
		onDelta = func(runtime.Delta) {}
	}
	return &decoder{srv: srv, onDelta: onDelta}
}

// line decodes one NDJSON line. It reports done on the final chunk.
func (d *decoder) line(b []byte) (done bool, err error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return false, nil
	}
	v, err := d.p.ParseBytes(b)
	if err != nil {
		return false, d.srv.BadResponse(fmt.Errorf("parse chunk: %w", err))
	}
	if v.Type() != fastjson.TypeObject {
		return false, d.srv.BadResponse(fmt.Errorf("chunk is a %s, not an object", v.Type()))
	}
	if e := v.Get("error"); e != nil {
		return false, d.streamError(llm.MessageOf(v))
	}
	if m := v.Get("message"); m != nil {
		if err := d.message(m); err != nil {
			return false, err
		}
	}
	if !v.GetBool("done") {
		return false, nil
	}
	d.stop = string(v.GetStringBytes("done_reason"))
	d.usage = runtime.Usage{
		PromptTokens:     v.GetInt("prompt_eval_count"),
		CompletionTokens: v.GetInt("eval_count"),
	}
	return true, nil
}

func (d *decoder) message(m *fastjson.Value) error {
	if t := m.GetStringBytes("thinking"); len(t) > 0 {
		d.onDelta(runtime.Delta{Thinking: string(t)})
	}
	if t := m.GetStringBytes("content"); len(t) > 0 {
		s := string(t)
		d.content.WriteString(s)
		d.onDelta(runtime.Delta{Text: s})
	}
	for _, tc := range m.GetArray("tool_calls") {
		if err := d.toolCall(tc); err != nil {
			return err
		}
	}
	return nil
}

// toolCall records one call. Arguments arrive as an object (some servers
// send a JSON string instead); either way they become JSON object text.
func (d *decoder) toolCall(tc *fastjson.Value) error {
	fn := tc.Get("function")
	name := fn.GetStringBytes("name")
	if len(name) == 0 {
		return d.srv.BadResponse(fmt.Errorf("tool call without a name"))
	}
	d.args = d.args[:0]
	switch a := fn.Get("arguments"); {
	case a == nil || a.Type() == fastjson.TypeNull:
		d.args = append(d.args, '{', '}')
	case a.Type() == fastjson.TypeObject:
		// fastjson parses lazily and lets raw control characters through
		// in strings; check the re-encoded text is valid JSON.
		if d.args = a.MarshalTo(d.args); !llm.IsObject(d.args) {
			return d.srv.BadResponse(fmt.Errorf("tool call %q: arguments are not valid JSON", name))
		}
	case a.Type() == fastjson.TypeString && llm.IsObject(a.GetStringBytes()):
		d.args = append(d.args, a.GetStringBytes()...)
	default:
		return d.srv.BadResponse(fmt.Errorf("tool call %q: arguments are not an object", name))
	}
	id := string(tc.GetStringBytes("id"))
	if id == "" {
		id = d.ids.Next(len(d.calls) + 1)
	}
	d.calls = append(d.calls, runtime.ToolCall{ID: id, Name: string(name), Arguments: string(d.args)})
	return nil
}

// streamError maps an {"error": ...} line sent after the stream began.
func (d *decoder) streamError(msg string) error {
	if msg == "" {
		msg = "unknown error"
	}
	return d.srv.Err(runtime.ErrServer, 0, fmt.Errorf("stream error: %s", msg),
		"%s failed mid-answer (%s): try again or check the server's log", d.srv.Where(), msg)
}

func (d *decoder) response() *runtime.Response {
	return &runtime.Response{
		Message: runtime.Message{
			Role:      runtime.RoleAssistant,
			Content:   d.content.String(),
			ToolCalls: d.calls,
		},
		Usage:      d.usage,
		StopReason: d.stop,
	}
}
