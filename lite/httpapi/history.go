package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// messageJSON is one message of GET …/messages: Agnx's role and content,
// with the event's seq and time as extensions.
type messageJSON struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// MessageID names an assistant message as POST …/messages and the
	// stream's done did (extension).
	MessageID string    `json:"message_id,omitempty"`
	Seq       uint64    `json:"seq"`
	Timestamp time.Time `json:"timestamp"`
}

// errEnough stops reading the log once limit messages are in.
var errEnough = errors.New("enough messages")

// listMessages answers the conversation as Agnx's client shows it: the
// user's messages and the assistant's final texts (not its tool calls,
// nor tool results), oldest first; ?limit=N keeps the first N.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	limit := -1
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			writeProblem(w, r, http.StatusBadRequest, codeInvalid,
				"limit must be a whole number from 0 to 4294967295: send ?limit=20, or no limit for all")
			return
		}
		limit = int(min(n, 1<<31-1))
	}
	out := []messageJSON{}
	if limit == 0 {
		// Agnx answers none; the session must exist all the same.
		if _, err := s.o.Loop.Session(r.Context(), r.PathValue("id")); err != nil {
			sessionError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"messages": out})
		return
	}
	id := r.PathValue("id")
	err := s.o.Loop.Events(r.Context(), id, 0, func(e runtime.Event) error {
		m := messageJSON{Content: e.Content, Seq: e.Seq, Timestamp: e.Time.UTC()}
		switch e.Type {
		case runtime.EvUserMessage:
			if e.Steering {
				return nil // a hook's note to the model, not the user's words
			}
			m.Role = "user"
		case runtime.EvAssistant:
			if len(e.ToolCalls) > 0 || e.Content == "" {
				return nil // a step of the turn, not its answer
			}
			m.Role, m.MessageID = "assistant", runtime.MessageID(id, e.Seq, e.Time)
		case runtime.EvToolCall, runtime.EvToolResult, runtime.EvToolProgress, runtime.EvToken,
			runtime.EvApprovalRequired, runtime.EvApprovalDecision, runtime.EvError,
			runtime.EvSessionStart, runtime.EvTurnEnd, runtime.EvSessionEnd,
			runtime.EvSilentMessage, runtime.EvHistoryCompaction:
			// Tool calls and results, approvals, errors, lifecycle, group
			// chatter kept out of the conversation, compactions: not
			// messages.
			fallthrough
		default:
			return nil
		}
		out = append(out, m)
		if len(out) == limit {
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		sessionError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out})
}
