package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
	"github.com/agnx-lite/agnx-lite/runtime/sse"
)

// writeTimeout bounds one write to an event stream: a client that stops
// reading is dropped instead of holding a goroutine forever.
const writeTimeout = 30 * time.Second

// sseWriter writes the API's event streams in the wire format of package
// sse, which a browser's EventSource and the Go client (client_stream.go)
// both read.
type sseWriter struct{ w *sse.Writer }

func newSSE(w http.ResponseWriter) *sseWriter {
	return &sseWriter{w: sse.NewWriter(w, writeTimeout)}
}

// send writes one event; id 0 writes none (tokens have no id), nor does
// an empty name (OpenAI's chunks are bare data).
func (s *sseWriter) send(id uint64, name string, data []byte) error {
	ev := sse.Event{Name: name, Data: data}
	if id > 0 {
		ev.ID = strconv.FormatUint(id, 10)
	}
	return s.w.Event(ev)
}

func (s *sseWriter) keepAlive() error { return s.w.Comment("keep-alive") }

// event writes a runtime event under its Agnx SSE name. Events a client
// has no use for (session_start) are skipped.
func (s *sseWriter) event(e *runtime.Event) error {
	name, data := encodeSSE(e)
	if name == "" {
		return nil
	}
	return s.send(e.Seq, name, data)
}

// encodeSSE maps an event to its lite SSE name and data (see sse_view.go
// for what a client sees):
//
//	token {content}            assistant text as it streams (no id)
//	user_message {content}     a message from any client (extension)
//	message {content, tool_calls}  the final text of one model call (extension;
//	                           replayed on resume, where tokens are not)
//	tool_call {call_id, name, arguments}
//	tool_result {call_id, content, success, details?}
//	approval_required {call_id, command, tool_name}   a call waits for POST .../approve
//	approval_decision {call_id, decision, reason}     (extension)
//	tool_progress {call_id, tool_name, content}       what a long call does (extension; never replayed)
//	error {message, code}
//	done {message_id, usage, status}  the turn ended (completed, failed, interrupted, paused)
//	cancelled {}               the turn was cancelled
func encodeSSE(e *runtime.Event) (string, []byte) {
	var name string
	w := jsonw.Writer{B: make([]byte, 0, 64+len(e.Content))}
	w.Object()
	switch e.Type {
	case runtime.EvToken:
		name = "token"
		w.Key("content").String(e.Content)
	case runtime.EvUserMessage:
		name = "user_message"
		w.Key("content").String(e.Content)
		w.OptString("sender_id", e.SenderID)
	case runtime.EvAssistant:
		name = "message"
		w.Key("content").String(e.Content)
		w.Key("tool_calls").Array()
		for _, c := range e.ToolCalls {
			w.Object()
			w.Key("id").String(c.ID)
			w.Key("name").String(c.Name)
			w.Key("arguments").String(c.Arguments)
			w.EndObject()
		}
		w.EndArray()
		w.OptString("origin", e.Origin)
	case runtime.EvToolCall:
		name = "tool_call"
		w.Key("call_id").String(e.CallID)
		w.Key("name").String(e.ToolName)
		w.Key("arguments").String(e.Arguments)
	case runtime.EvToolResult:
		name = "tool_result"
		w.Key("call_id").String(e.CallID)
		w.Key("content").String(e.Content)
		w.Key("success").Bool(e.Success)
		if len(e.Details) > 0 && fastjson.ValidateBytes(e.Details) == nil {
			w.Key("details").Raw(e.Details)
		}
	case runtime.EvApprovalRequired:
		name = "approval_required"
		w.Key("call_id").String(e.CallID)
		w.Key("command").String(e.Content)
		w.Key("tool_name").String(e.ToolName)
	case runtime.EvToolProgress:
		name = "tool_progress"
		w.Key("call_id").String(e.CallID)
		w.Key("tool_name").String(e.ToolName)
		w.Key("content").String(e.Content)
	case runtime.EvApprovalDecision:
		name = "approval_decision"
		w.Key("call_id").String(e.CallID)
		w.Key("decision").String(e.Decision)
		w.Key("reason").String(e.Reason)
	case runtime.EvError:
		return "error", errorData(e.Code, e.Content)
	case runtime.EvTurnEnd:
		if e.Reason == runtime.TurnCancelled {
			return "cancelled", []byte("{}")
		}
		// A stream's turnView names the turn's message.
		return "done", doneData("", e)
	case runtime.EvSessionStart, runtime.EvSessionEnd, runtime.EvSilentMessage, runtime.EvHistoryCompaction:
		// session_start and session_end: a client has no use for them;
		// silent_message: group chatter kept as context, not part of the
		// conversation a client follows; history_compaction: what the
		// model is sent changed, not the conversation.
		fallthrough
	default:
		return "", nil
	}
	return name, w.EndObject().B
}
