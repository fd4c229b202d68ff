package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// codeTurnRunning: a manual compaction while a turn runs (409).
const codeTurnRunning = "turn_running"

// codeSessionAnswered: a discard of a session a model answered (409).
const codeSessionAnswered = "session_answered"

// CompactResult is what POST /api/v1/sessions/{id}/compact answers.
type CompactResult struct {
	// Method is summary, trim (no usable summary: the oldest exchanges
	// were dropped) or none (nothing to compact: one exchange).
	Method       string `json:"method"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
	// CoversTo is the last event seq the summary stands for; 0 for none.
	CoversTo uint64 `json:"covers_to,omitempty"`
}

// compact summarises all of a session's window but its newest exchange
// (a lite extension; chats say /compact). It answers once the
// history_compaction event is committed.
func (s *Server) compact(w http.ResponseWriter, r *http.Request) {
	res, err := s.o.Loop.Compact(r.Context(), r.PathValue("id"))
	if errors.Is(err, runtime.ErrTurnRunning) {
		writeProblem(w, r, http.StatusConflict, codeTurnRunning,
			"a turn is running in session "+r.PathValue("id")+": compact it after the turn ends")
		return
	}
	if err != nil {
		sessionError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, CompactResult{Method: res.Method, TokensBefore: res.TokensBefore,
		TokensAfter: res.TokensAfter, CoversTo: res.CoversTo})
}

// Compact asks the daemon to compact a session's history now.
func (c *Client) Compact(ctx context.Context, id string) (CompactResult, error) {
	var res CompactResult
	err := c.call(ctx, request{method: "POST", path: sessionPath(id) + "/compact"}, &res, false)
	return res, err
}

// end ends a session (a lite extension): it takes no more messages, its
// log is kept, and a chat's next message starts a new session. A turn
// running or waiting for approval: 409.
func (s *Server) end(w http.ResponseWriter, r *http.Request) {
	err := s.o.Loop.EndSession(r.Context(), r.PathValue("id"), runtime.EndCompleted)
	if errors.Is(err, runtime.ErrTurnActive) {
		writeProblem(w, r, http.StatusConflict, codeTurnRunning, err.Error())
		return
	}
	if err != nil {
		sessionError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// EndSession asks the daemon to end a session.
func (c *Client) EndSession(ctx context.Context, id string) error {
	return c.call(ctx, request{method: "POST", path: sessionPath(id) + "/end"}, nil, false)
}

// discard removes a session nothing from a model ever reached (a lite
// extension; runtime.Loop.DiscardUnanswered): a front that started the
// session for a first message which failed before any answer. The check
// and the removal are one step, so a message that arrives first keeps
// it: 204 removed, 409 session_answered kept.
func (s *Server) discard(w http.ResponseWriter, r *http.Request) {
	gone, err := s.o.Loop.DiscardUnanswered(r.Context(), r.PathValue("id"))
	if err != nil {
		sessionError(w, r, err)
		return
	}
	if !gone {
		writeProblem(w, r, http.StatusConflict, codeSessionAnswered,
			"the session holds an answer, a tool call, more than one turn or a running turn: delete it with DELETE if you mean to")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// DiscardUnanswered asks the daemon to remove a session nothing from a
// model reached; it reports whether it did (false: the session is kept).
func (c *Client) DiscardUnanswered(ctx context.Context, id string) (bool, error) {
	err := c.call(ctx, request{method: "POST", path: sessionPath(id) + "/discard"}, nil, false)
	var pe *ProblemError
	if errors.As(err, &pe) && pe.Code == codeSessionAnswered {
		return false, nil
	}
	return err == nil, err
}
