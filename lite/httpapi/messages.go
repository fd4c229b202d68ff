package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// waitQueue is the subscription queue of a request that waits for its
// turn's outcome and streams nothing (see runtime.Loop.FollowQueue).
const waitQueue = 8

// postMessage sends a message and answers when its turn ends: 200
// {message_id, role, content}, or 202 {session_id, call_id, command} as
// soon as the turn waits for a decision on a tool call (POST .../approve
// answers it and returns the rest). A turn that fails, or that used all its
// agent's tool rounds, is a problem, as in Agnx (the answer stays in the
// log).
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	sub, sent, ok := s.send(w, r, waitQueue)
	if !ok {
		return
	}
	f := newTurnFollower(sent)
	s.waitTurn(w, r, sub, func(e *runtime.Event) (keep, done bool) {
		ours := f.ours() // before accept counts a turn_end
		keep, done = f.accept(e)
		return keep && ours, done
	}, false, sent.Seq)
}

// turnOutcome is how the part of a turn a request waits for went.
type turnOutcome struct {
	end      *runtime.Event // the turn_end
	approval *runtime.Event // or the approval_required it stopped at
	answer   runtime.Event  // the last assistant message (Seq 0: none)
	errMsg   string         // the turn's last error
	errCode  string
}

// waitTurn reads sub until the turn ends or waits for a decision, and
// answers the request with how it went. A client that leaves before is
// gone as from a stream (on_disconnect), but one whose turn waits for a
// decision leaves nothing to stop. stored is the seq of the message the
// request stored (0: none).
func (s *Server) waitTurn(w http.ResponseWriter, r *http.Request, sub *runtime.Subscription,
	accept func(*runtime.Event) (keep, done bool), approve bool, stored uint64) {
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), s.o.RequestTimeout)
	defer cancel()
	var out turnOutcome
	for {
		select {
		case <-ctx.Done():
			s.clientGone(sub, id)
			if r.Context().Err() == nil {
				writeProblem(w, r, http.StatusRequestTimeout, codeTimeout,
					"the turn did not end within server.request_timeout_seconds: it goes on; read it with GET .../messages")
			}
			return
		case e, open := <-sub.C():
			if !open {
				subGone(w, r, sub, id, stored)
				return
			}
			keep, done := accept(&e)
			if !keep {
				continue
			}
			switch e.Type {
			case runtime.EvAssistant:
				if e.Origin == "" { // a notice (a reminder, a process) is not the turn's answer
					out.answer = e
				}
			case runtime.EvError:
				if e.Code != runtime.CodeHistoryTrimmed { // told between turns: not this turn's failure
					out.errMsg, out.errCode = e.Content, e.Code
				}
			case runtime.EvApprovalRequired:
				out.approval = &e
				done = true
			case runtime.EvSessionStart, runtime.EvUserMessage, runtime.EvToken, runtime.EvToolCall,
				runtime.EvToolResult, runtime.EvToolProgress, runtime.EvApprovalDecision,
				runtime.EvTurnEnd, runtime.EvSessionEnd, runtime.EvSilentMessage, runtime.EvHistoryCompaction:
				// The reply is the last answer and the error, if any (accept
				// said whether the turn is over).
			}
			if !done {
				continue
			}
			sub.Close()
			if out.approval == nil {
				out.end = &e
			}
			s.reply(w, r, &out, approve)
			return
		}
	}
}

// subGone answers a request whose subscription ended before its turn.
// When a commit of the turn found the disk full, what the request stored
// (the message, seq stored; an approval's decision) is stored all the
// same: the answer says so, not 507, or a client would send it again and
// store it twice (a resend of the same text is refused anyway, see
// runtime.TurnLostError).
func subGone(w http.ResponseWriter, r *http.Request, sub *runtime.Subscription, id string, stored uint64) {
	switch {
	case sub.Deleted():
		writeProblem(w, r, http.StatusNotFound, codeSessionNotFound, deletedMidTurn(id))
	case sub.Err() != nil && stored > 0: // a commit failed: the disk is full
		writeProblem(w, r, http.StatusInternalServerError, codeInsufficientStorage, fmt.Sprintf(
			"the disk filled up during this message's turn, which could not finish; the message is stored (seq %d) "+
				"and must not be sent again: free some space, then send your next message", stored))
	case sub.Err() != nil:
		writeProblem(w, r, http.StatusInternalServerError, codeInsufficientStorage,
			"the disk filled up during the turn, which could not finish; your decision is stored: free some space, then send your next message")
	default:
		writeProblem(w, r, http.StatusServiceUnavailable, codeUnavailable, "the runtime stopped before the turn ended")
	}
}

// reply answers with how a turn went: POST .../messages' form, or with
// approve set POST .../approve's ({status: complete|pending_approval}).
// Agnx's fields come first; lite's (status, tool_calls, usage, seq) join
// them.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, out *turnOutcome, approve bool) {
	id := r.PathValue("id")
	if a := out.approval; a != nil {
		body := map[string]any{"session_id": id, "call_id": a.CallID, "command": a.Content, "tool_name": a.ToolName}
		if approve {
			body["status"] = "pending_approval"
		}
		writeJSON(w, http.StatusAccepted, body)
		return
	}
	e := out.end
	switch {
	case out.errCode == runtime.CodeTokenBudget:
		// Refused before the model was called: the client may retry after
		// midnight, or once the budget is raised.
		writeProblem(w, r, http.StatusTooManyRequests, codeTokenBudget, out.errMsg)
		return
	case e.Reason == runtime.TurnFailed:
		// Agnx answers a failed model call 500 internal-error; the
		// problem's code says it was the provider.
		writeProblem(w, r, http.StatusInternalServerError, codeProvider, out.errMsg)
		return
	case out.errCode == runtime.CodeToolLimit:
		// Agnx fails a turn that used all its tool rounds.
		writeProblem(w, r, http.StatusInternalServerError, codeInternal, out.errMsg)
		return
	}
	msgID := ""
	if out.answer.Seq > 0 {
		msgID = runtime.MessageID(id, out.answer.Seq, out.answer.Time)
	}
	body := map[string]any{"message_id": msgID, "role": "assistant", "content": out.answer.Content,
		"tool_calls": toCalls(out.answer.ToolCalls), "usage": toUsage(e.Usage), "seq": e.Seq, "turn_status": e.Reason}
	if approve {
		body["status"] = "complete"
	} else {
		body["status"] = e.Reason
	}
	writeJSON(w, http.StatusOK, body)
}

// deletedMidTurn is what a client waiting for a turn is told when its
// session is deleted under it.
func deletedMidTurn(id string) string {
	return "session " + id + " was deleted while its turn ran: create a new session to go on"
}

type toolCallJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func toCalls(calls []runtime.ToolCall) []toolCallJSON {
	out := make([]toolCallJSON, len(calls))
	for i, c := range calls {
		out[i] = toolCallJSON{c.ID, c.Name, c.Arguments}
	}
	return out
}

// export writes the session's whole log as JSON Lines, one stored event a
// line: Agnx's events.jsonl form (agnx-lite extension).
func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.o.Loop.Session(r.Context(), id); err != nil {
		sessionError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="`+id+`.jsonl"`)
	w.Header().Set("Trailer", exportErrorTrailer)
	var buf []byte
	wrote, writeErr := false, error(nil)
	err := s.o.Loop.Events(r.Context(), id, 0, func(e runtime.Event) error {
		buf = append(e.AppendJSON(buf[:0]), '\n')
		wrote = true
		_, writeErr = w.Write(buf)
		return writeErr
	})
	switch {
	case err == nil, writeErr != nil, r.Context().Err() != nil:
		// Complete, or the client is gone.
	case !wrote:
		w.Header().Del("Trailer")
		sessionError(w, r, err)
	default:
		// What was readable was sent (a damaged archive's events before
		// the damage, then the stored ones); the trailer says what is
		// missing, and Client.Export returns it.
		s.log.Warn("session export incomplete", "session", id, "err", err)
		w.Header().Set(exportErrorTrailer, err.Error())
	}
}

// exportErrorTrailer is the HTTP trailer of an export that could not read
// every event: the sentence that says what is missing.
const exportErrorTrailer = "X-Agnx-Export-Error"
