package openai

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
	// Named apart from the tests' sse() stream builder.
	ssewire "github.com/agnx-lite/agnx-lite/runtime/sse"
)

// maxToolCalls bounds the index a server may give a tool call, so a broken
// stream cannot make the decoder allocate without limit.
const maxToolCalls = 128

// partialCall is a tool call being assembled from fragments.
type partialCall struct {
	id, name string
	args     []byte
}

// decoder turns SSE lines into deltas and one final response. One decoder
// serves one stream; its parser and buffers are reused per event.
type decoder struct {
	srv     *llm.Server
	onDelta func(runtime.Delta)
	p       fastjson.Parser
	ev      ssewire.Parser
	content strings.Builder
	calls   []partialCall
	ids     llm.CallIDs
	usage   runtime.Usage
	stop    string
}

func newDecoder(srv *llm.Server, onDelta func(runtime.Delta)) *decoder {
	if onDelta == nil {
		onDelta = func(runtime.Delta) {}
	}
	// An event may be as large as a line of the body, no larger.
	return &decoder{srv: srv, onDelta: onDelta, ev: ssewire.Parser{Max: llm.MaxLineBytes}}
}

// line feeds one SSE line. It reports done after "data: [DONE]".
func (d *decoder) line(b []byte) (done bool, err error) {
	ev, ok, err := d.ev.Line(b)
	if err != nil {
		return false, d.srv.BadResponse(err)
	}
	if !ok {
		return false, nil
	}
	return d.event(ev.Data)
}

// end is called at the end of the body. A stream that stopped with a
// finish_reason but no [DONE] is complete; without either it broke off.
func (d *decoder) end() (*runtime.Response, error) {
	if ev, ok := d.ev.Flush(); ok {
		done, err := d.event(ev.Data)
		if err != nil {
			return nil, err
		}
		if done {
			return d.response(), nil
		}
	}
	if d.stop == "" {
		return nil, d.srv.Interrupted(fmt.Errorf("stream ended without [DONE] or finish_reason"))
	}
	return d.response(), nil
}

func (d *decoder) event(data []byte) (bool, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return false, nil
	}
	if string(data) == "[DONE]" {
		return true, nil
	}
	v, err := d.p.ParseBytes(data)
	if err != nil {
		return false, d.srv.BadResponse(fmt.Errorf("parse chunk: %w", err))
	}
	if v.Type() != fastjson.TypeObject {
		return false, d.srv.BadResponse(fmt.Errorf("chunk is a %s, not an object", v.Type()))
	}
	if e := v.Get("error"); e != nil && e.Type() != fastjson.TypeNull {
		return false, d.streamError(e, llm.MessageOf(v))
	}
	if u := v.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		d.usage = runtime.Usage{
			PromptTokens:     u.GetInt("prompt_tokens"),
			CompletionTokens: u.GetInt("completion_tokens"),
			ReasoningTokens:  u.GetInt("completion_tokens_details", "reasoning_tokens"),
		}
	}
	choices := v.GetArray("choices")
	if len(choices) == 0 {
		return false, nil
	}
	c := choices[0]
	if fr := c.GetStringBytes("finish_reason"); len(fr) > 0 {
		d.stop = string(fr)
	}
	return false, d.delta(c.Get("delta"))
}

func (d *decoder) delta(delta *fastjson.Value) error {
	if delta == nil {
		return nil
	}
	t := delta.GetStringBytes("reasoning_content")
	if len(t) == 0 {
		t = delta.GetStringBytes("reasoning")
	}
	if len(t) > 0 {
		d.onDelta(runtime.Delta{Thinking: string(t)})
	}
	if t := delta.GetStringBytes("content"); len(t) > 0 {
		s := string(t)
		d.content.WriteString(s)
		d.onDelta(runtime.Delta{Text: s})
	}
	for _, tc := range delta.GetArray("tool_calls") {
		if err := d.toolCall(tc); err != nil {
			return err
		}
	}
	return nil
}

// toolCall merges one fragment into the call at its index. A fragment
// without an index continues the last call unless it brings a new id; a
// fragment whose id differs from the one already at its index starts a new
// call (some servers give every call index 0).
func (d *decoder) toolCall(tc *fastjson.Value) error {
	id := tc.GetStringBytes("id")
	idx := len(d.calls) - 1
	switch iv := tc.Get("index"); {
	case iv != nil && iv.Type() == fastjson.TypeNumber:
		idx = iv.GetInt()
	case len(id) > 0 || idx < 0:
		idx = len(d.calls)
	}
	if idx < len(d.calls) && len(id) > 0 && d.calls[idx].id != "" && d.calls[idx].id != string(id) {
		idx = len(d.calls)
	}
	if idx < 0 || idx >= maxToolCalls {
		return d.srv.BadResponse(fmt.Errorf("tool call index %d out of range", idx))
	}
	for len(d.calls) <= idx {
		d.calls = append(d.calls, partialCall{})
	}
	pc := &d.calls[idx]
	if len(id) > 0 && pc.id == "" {
		pc.id = string(id)
	}
	fn := tc.Get("function")
	if name := fn.GetStringBytes("name"); len(name) > 0 && pc.name == "" {
		pc.name = string(name)
	}
	if a := fn.Get("arguments"); a != nil {
		switch a.Type() {
		case fastjson.TypeString:
			pc.args = append(pc.args, a.GetStringBytes()...)
		case fastjson.TypeObject: // a few servers send an object, not text
			pc.args = a.MarshalTo(pc.args)
		}
	}
	return nil
}

// streamError maps an {"error": {...}} event sent after the stream began.
func (d *decoder) streamError(e *fastjson.Value, msg string) error {
	if msg == "" {
		msg = "unknown error"
	}
	kind := runtime.ErrServer
	switch e.GetInt("code") {
	case 429:
		kind = runtime.ErrRateLimited
	case 400:
		kind = runtime.ErrBadRequest
	}
	return d.srv.Err(kind, 0, fmt.Errorf("stream error: %s", msg),
		"%s failed mid-answer (%s): try again or check the server's log", d.srv.Where(), msg)
}

func (d *decoder) response() *runtime.Response {
	var calls []runtime.ToolCall
	for _, pc := range d.calls {
		if pc.name == "" {
			continue
		}
		args := string(pc.args)
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		id := pc.id
		if id == "" {
			id = d.ids.Next(len(calls) + 1)
		}
		calls = append(calls, runtime.ToolCall{ID: id, Name: pc.name, Arguments: args})
	}
	return &runtime.Response{
		Message:    runtime.Message{Role: runtime.RoleAssistant, Content: d.content.String(), ToolCalls: calls},
		Usage:      d.usage,
		StopReason: d.stop,
	}
}
