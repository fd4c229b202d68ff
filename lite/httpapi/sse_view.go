package httpapi

import (
	"net/http"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
)

// What a client sees of a turn on an event stream. By default it is
// Agnx's stream, which Agnx's client parser accepts and nothing else:
//
//	start {}, token {content}*, then one of done {message_id, usage},
//	error {message}, cancelled {} or approval_required {call_id, command}
//
// and on POST .../stream the response ends there. Agnx's parser aborts on
// any other event name, so lite's own events are sent only to a client
// that asks for them with ?events=a,b (or all), or the header
// X-Agnx-Events. A client that asks for any gets lite's stream: every
// error is its own event (with its code), every turn ends with done
// {status, message_id, usage} (status completed, failed, paused,
// interrupted) or cancelled, and a stream does not end at
// approval_required: the turn goes on once POST .../approve answers it.

// extEvents are the events a client may ask for, beyond Agnx's six.
var extEvents = []string{"user_message", "message", "tool_call", "tool_result", "approval_decision", "tool_progress"}

// maxEventsParam bounds ?events= and X-Agnx-Events.
const maxEventsParam = 512

// sseView is what a client asked to see.
type sseView struct {
	lite bool            // it asked for lite's events: lite's stream
	ext  map[string]bool // the extension events it asked for
}

// viewOf reads the events a request asks for. Names it does not know are
// ignored (a newer client may ask for events this server lacks).
func viewOf(r *http.Request) (sseView, string) {
	v := r.URL.Query().Get("events")
	if v == "" {
		v = r.Header.Get("X-Agnx-Events")
	}
	if len(v) > maxEventsParam {
		return sseView{}, "?events= (or X-Agnx-Events) is too long: list at most a few event names, or say all"
	}
	var view sseView
	for name := range strings.SplitSeq(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		view.lite = true
		if view.ext == nil {
			view.ext = make(map[string]bool)
		}
		if name == "all" {
			for _, n := range extEvents {
				view.ext[n] = true
			}
			continue
		}
		view.ext[name] = true
	}
	return view, ""
}

// turnView turns one stream's runtime events into what its client sees.
type turnView struct {
	view sseView
	sid  string
	// endOnApproval: a POST .../stream in Agnx's view ends at
	// approval_required.
	endOnApproval bool
	// answer is the turn's last assistant message (Seq 0: none yet): the
	// done event names it. errMsg and errCode are the turn's last error,
	// for Agnx's error event.
	answer  runtime.Event
	errMsg  string
	errCode string
}

// write sends what the client sees of e and reports whether the stream
// is over for it.
func (v *turnView) write(sse *sseWriter, e *runtime.Event) (end bool, err error) {
	switch e.Type {
	case runtime.EvAssistant:
		if e.Origin == "" { // a notice is not the turn's answer
			v.answer = runtime.Event{Seq: e.Seq, Time: e.Time}
		}
	case runtime.EvError:
		if e.Code != runtime.CodeHistoryTrimmed { // told between turns: not this turn's failure
			v.errMsg, v.errCode = e.Content, e.Code
		}
	case runtime.EvSessionStart, runtime.EvUserMessage, runtime.EvToken, runtime.EvToolCall,
		runtime.EvToolResult, runtime.EvToolProgress, runtime.EvApprovalRequired, runtime.EvApprovalDecision,
		runtime.EvTurnEnd, runtime.EvSessionEnd, runtime.EvSilentMessage, runtime.EvHistoryCompaction:
		// The rest is only written.
	}
	if v.view.lite {
		return false, v.writeLite(sse, e)
	}
	return v.writeAgnx(sse, e)
}

func (v *turnView) writeLite(sse *sseWriter, e *runtime.Event) error {
	name, data := encodeSSE(e)
	if name == "" || !baseEvent(name) && !v.view.ext[name] {
		return nil
	}
	if e.Type == runtime.EvTurnEnd {
		defer v.reset()
		if e.Reason != runtime.TurnCancelled {
			data = v.doneData(e)
		}
	}
	return sse.send(e.Seq, name, data)
}

func (v *turnView) writeAgnx(sse *sseWriter, e *runtime.Event) (bool, error) {
	switch e.Type {
	case runtime.EvToken:
		return false, sse.event(e)
	case runtime.EvApprovalRequired:
		return v.endOnApproval, sse.event(e)
	case runtime.EvTurnEnd:
		defer v.reset()
		switch {
		case e.Reason == runtime.TurnCancelled || e.Reason == runtime.TurnPaused:
			return false, sse.send(e.Seq, "cancelled", []byte("{}"))
		case v.errMsg != "" || e.Reason != runtime.TurnCompleted:
			// A turn that used all its tool rounds too: Agnx fails it.
			return false, sse.send(e.Seq, "error", errorData(v.errCode, v.turnError(e.Reason)))
		}
		return false, sse.send(e.Seq, "done", v.doneData(e))
	case runtime.EvSessionStart, runtime.EvUserMessage, runtime.EvAssistant, runtime.EvToolCall,
		runtime.EvToolResult, runtime.EvToolProgress, runtime.EvApprovalDecision, runtime.EvError,
		runtime.EvSessionEnd, runtime.EvSilentMessage, runtime.EvHistoryCompaction:
		// Agnx's clients know no other event (an error is told at the
		// turn's end, above).
		fallthrough
	default:
		return false, nil
	}
}

// turnError is the sentence of Agnx's error event for a turn that did not
// complete cleanly.
func (v *turnView) turnError(reason string) string {
	switch {
	case v.errMsg != "":
		return v.errMsg
	case reason == runtime.TurnInterrupted:
		return "the turn was interrupted when the daemon stopped: send a message to go on"
	}
	return "the turn ended " + reason + ": read the session's messages to see how far it got"
}

func (v *turnView) reset() { v.answer, v.errMsg, v.errCode = runtime.Event{}, "", "" }

// messageID names the turn's final assistant message, "" before there is
// one.
func (v *turnView) messageID() string {
	if v.answer.Seq == 0 {
		return ""
	}
	return runtime.MessageID(v.sid, v.answer.Seq, v.answer.Time)
}

// doneData is the data of a done event: Agnx's message_id and usage, and
// lite's status (how the turn ended), which Agnx's parser ignores.
func (v *turnView) doneData(e *runtime.Event) []byte { return doneData(v.messageID(), e) }

func doneData(messageID string, e *runtime.Event) []byte {
	w := jsonw.Writer{B: make([]byte, 0, 160)}
	w.Object()
	w.Key("message_id").String(messageID)
	u := toUsage(e.Usage)
	w.Key("usage").Object()
	w.Key("prompt_tokens").Int(int64(u.Prompt))
	w.Key("completion_tokens").Int(int64(u.Completion))
	w.Key("total_tokens").Int(int64(u.Total))
	w.EndObject()
	w.Key("status").String(e.Reason)
	return w.EndObject().B
}

// errorData is the data of an error event: Agnx's message and lite's
// code.
func errorData(code, msg string) []byte {
	w := jsonw.Writer{B: make([]byte, 0, 64+len(msg))}
	w.Object()
	w.Key("message").String(msg)
	w.OptString("code", code)
	return w.EndObject().B
}

func baseEvent(name string) bool {
	switch name {
	case "start", "token", "done", "error", "cancelled", "approval_required":
		return true
	}
	return false
}
