package httpapi

import (
	"context"
	"net/http"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// postMessage sends a message and answers when its turn ends.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	sub, sent, ok := s.send(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), s.o.RequestTimeout)
	defer cancel()
	f := newTurnFollower(sent)
	var answer, errMsg string
	var calls []runtime.ToolCall
	for {
		select {
		case <-ctx.Done():
			s.clientGone(sub, id)
			if r.Context().Err() == nil {
				writeProblem(w, r, http.StatusGatewayTimeout, codeUnavailable,
					"the turn did not end within server.request_timeout_seconds: it goes on; read it with GET .../messages")
			}
			return
		case e, open := <-sub.C():
			if !open {
				if sub.Deleted() {
					writeProblem(w, r, http.StatusNotFound, codeSessionNotFound, deletedMidTurn(id))
					return
				}
				if err := sub.Err(); err != nil { // a commit failed: the disk is full
					writeProblem(w, r, http.StatusInsufficientStorage, codeInsufficientStorage, err.Error())
					return
				}
				writeProblem(w, r, http.StatusServiceUnavailable, codeUnavailable, "the runtime stopped before the turn ended")
				return
			}
			keep, done := f.accept(&e)
			if !keep {
				continue
			}
			switch e.Type {
			case runtime.EvAssistant:
				answer, calls = e.Content, e.ToolCalls
			case runtime.EvError:
				errMsg = e.Content
			default:
				// The reply is the last answer and the error, if any.
			}
			if !done {
				continue
			}
			sub.Close()
			if e.Reason == runtime.TurnFailed {
				writeProblem(w, r, http.StatusBadGateway, codeProvider, errMsg)
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{
				"role": "assistant", "content": answer, "status": e.Reason,
				"tool_calls": toCalls(calls), "usage": toUsage(e.Usage), "seq": e.Seq,
			})
			return
		}
	}
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
	var buf []byte
	_ = s.o.Loop.Events(r.Context(), id, 0, func(e runtime.Event) error {
		buf = append(e.AppendJSON(buf[:0]), '\n')
		_, err := w.Write(buf)
		return err
	})
}
