package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// writeTimeout bounds one write to an event stream: a client that stops
// reading is dropped instead of holding a goroutine forever.
const writeTimeout = 30 * time.Second

// sseWriter writes Server-Sent Events.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf []byte
}

func newSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// Send the headers now: a client following a quiet session would
	// otherwise wait for the first event to learn the stream is open.
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	return &sseWriter{w: w, rc: rc}
}

// send writes one event; id 0 writes none (tokens have no id).
func (s *sseWriter) send(id uint64, name string, data []byte) error {
	b := s.buf[:0]
	if id > 0 {
		b = append(b, "id: "...)
		b = strconv.AppendUint(b, id, 10)
		b = append(b, '\n')
	}
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, '\n', '\n')
	s.buf = b
	return s.write(b)
}

func (s *sseWriter) keepAlive() error { return s.write([]byte(": keep-alive\n\n")) }

func (s *sseWriter) write(b []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// event writes a runtime event under its Agnx SSE name. Events a client
// has no use for (session_start) are skipped.
func (s *sseWriter) event(e *runtime.Event) error {
	name, data := encodeSSE(e)
	if name == "" {
		return nil
	}
	return s.send(e.Seq, name, data)
}

// encodeSSE maps an event to its SSE name and data:
//
//	token {content}            assistant text as it streams (no id)
//	user_message {content}     a message from any client (extension)
//	message {content, tool_calls}  the final text of one model call (extension;
//	                           replayed on resume, where tokens are not)
//	tool_call {call_id, name, arguments}
//	tool_result {call_id, content, success, details?}
//	approval_required {call_id, command, tool_name}   a call waits for POST .../approve
//	approval_decision {call_id, decision, reason}     (extension)
//	error {code, message}
//	done {status, usage}       the turn ended (completed, failed, interrupted, paused)
//	cancelled {}               the turn was cancelled
func encodeSSE(e *runtime.Event) (string, []byte) {
	var b []byte
	add := func(k, v string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = runtime.AppendJSONString(b, k)
		b = append(b, ':')
		b = runtime.AppendJSONString(b, v)
	}
	b = append(b, '{')
	var name string
	switch e.Type {
	case runtime.EvToken:
		name = "token"
		add("content", e.Content)
	case runtime.EvUserMessage:
		name = "user_message"
		add("content", e.Content)
		if e.SenderID != "" {
			add("sender_id", e.SenderID)
		}
	case runtime.EvAssistant:
		name = "message"
		add("content", e.Content)
		b = append(b, `,"tool_calls":[`...)
		for i, c := range e.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = runtime.AppendJSONString(b, c.ID)
			b = append(b, `,"name":`...)
			b = runtime.AppendJSONString(b, c.Name)
			b = append(b, `,"arguments":`...)
			b = runtime.AppendJSONString(b, c.Arguments)
			b = append(b, '}')
		}
		b = append(b, ']')
	case runtime.EvToolCall:
		name = "tool_call"
		add("call_id", e.CallID)
		add("name", e.ToolName)
		add("arguments", e.Arguments)
	case runtime.EvToolResult:
		name = "tool_result"
		add("call_id", e.CallID)
		add("content", e.Content)
		b = append(b, `,"success":`...)
		b = strconv.AppendBool(b, e.Success)
		if len(e.Details) > 0 {
			b = append(b, `,"details":`...)
			b = append(b, e.Details...)
		}
	case runtime.EvApprovalRequired:
		name = "approval_required"
		add("call_id", e.CallID)
		add("command", e.Content)
		add("tool_name", e.ToolName)
	case runtime.EvApprovalDecision:
		name = "approval_decision"
		add("call_id", e.CallID)
		add("decision", e.Decision)
		add("reason", e.Reason)
	case runtime.EvError:
		name = "error"
		add("code", e.Code)
		add("message", e.Content)
	case runtime.EvTurnEnd:
		if e.Reason == runtime.TurnCancelled {
			return "cancelled", []byte("{}")
		}
		name = "done"
		add("status", e.Reason)
		u := toUsage(e.Usage)
		b = append(b, `,"usage":{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(u.Prompt), 10)
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(u.Completion), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(u.Total), 10)
		b = append(b, '}')
	default:
		return "", nil
	}
	return name, append(b, '}')
}
