package anthropic

import (
	"bytes"
	"fmt"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// response assembles the final message. A tool call the stream was still
// writing when max_tokens cut it is an error, never a call to run.
func (d *decoder) response() (*runtime.Response, error) {
	if d.stop == "max_tokens" {
		for i := len(d.blocks) - 1; i >= 0; i-- {
			if b := &d.blocks[i]; b.kind == kindToolUse {
				return nil, d.srv.Err(runtime.ErrBadRequest, 0,
					fmt.Errorf("stop_reason max_tokens in tool_use block %d (%s)", i, b.name),
					"the model reached its output limit (max_tokens) while writing a call to the tool %q, so the call was not run: raise spec.model.max_output_tokens in the agent's agent.yaml",
					b.name)
			} else if b.kind != kindNone {
				break
			}
		}
	}
	msg := runtime.Message{Role: runtime.RoleAssistant, Content: d.content.String()}
	for i := range d.blocks {
		b := &d.blocks[i]
		switch b.kind {
		case kindToolUse:
			msg.ToolCalls = append(msg.ToolCalls, runtime.ToolCall{ID: b.id, Name: b.name, Arguments: toolInput(b.buf)})
		case kindThinking:
			msg.Thinking = append(msg.Thinking, runtime.ThinkingBlock{Text: string(b.buf), Signature: string(b.sig)})
		case kindRedacted:
			msg.Thinking = append(msg.Thinking, runtime.ThinkingBlock{Redacted: b.redacted})
		}
	}
	for i := range msg.ToolCalls {
		if msg.ToolCalls[i].ID == "" {
			msg.ToolCalls[i].ID = fmt.Sprintf("toolu_%d", i+1)
		}
	}
	return &runtime.Response{Message: msg, Usage: d.usage, StopReason: d.stop}, nil
}

// toolInput is the assembled input JSON, "{}" for a tool without
// parameters (the stream then sends no fragment, or an empty one).
func toolInput(b []byte) string {
	if len(bytes.TrimSpace(b)) == 0 {
		return "{}"
	}
	return string(b)
}

// streamError maps an error event sent after the stream began.
func (d *decoder) streamError(v *fastjson.Value) error {
	typ := string(v.GetStringBytes("error", "type"))
	msg := string(v.GetStringBytes("error", "message"))
	if msg == "" {
		msg = typ
	}
	if msg == "" {
		msg = "unknown error"
	}
	cause := fmt.Errorf("stream error %s: %s", typ, msg)
	switch typ {
	case "overloaded_error":
		return d.srv.Err(runtime.ErrServer, 0, cause,
			"%s is overloaded and stopped mid-answer (%s): try again in a few minutes", d.srv.Where(), msg)
	case "rate_limit_error":
		return d.srv.Err(runtime.ErrRateLimited, 0, cause,
			"%s is rate limiting requests and stopped mid-answer (%s): wait a little and try again", d.srv.Where(), msg)
	case "invalid_request_error", "request_too_large":
		return d.srv.Err(runtime.ErrBadRequest, 0, cause,
			"%s rejected the request mid-answer (%s): check spec.model in the agent's agent.yaml", d.srv.Where(), msg)
	case "authentication_error", "permission_error":
		return d.srv.Err(runtime.ErrAuth, 0, cause,
			"%s rejected the credentials mid-answer (%s): check the API key", d.srv.Where(), msg)
	}
	return d.srv.Err(runtime.ErrServer, 0, cause,
		"%s failed mid-answer (%s): try again or check the server's status", d.srv.Where(), msg)
}
