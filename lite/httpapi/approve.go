package httpapi

import (
	"errors"
	"net/http"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// approveBody is POST .../approve's body. Agnx sends command too; lite
// needs only call_id, and the command it asked about is what counts.
type approveBody struct {
	CallID   string `json:"call_id"`
	Command  string `json:"command"`
	Decision string `json:"decision"`
}

// maxCallIDLen bounds call_id: ids are the model's or ours, short.
const maxCallIDLen = 256

// approveCall answers a tool call waiting for a decision and waits for the
// turn to go on, as Agnx does: 200 {status: complete, message_id, content}
// when the turn ends, 202 {status: pending_approval, call_id, command} when
// it waits for another decision. No call waiting: 404, detail containing
// "no pending approval" (Agnx's CLI matches that); another call waiting:
// 400. With ?wait=false (lite) it answers 200 {status: accepted} once the
// decision is stored: a client reading the turn's stream sees the rest
// there.
func (s *Server) approveCall(w http.ResponseWriter, r *http.Request) {
	var body approveBody
	if status, err := decode(r, &body); err != nil {
		writeProblem(w, r, status, problemCode(status), err.Error())
		return
	}
	switch {
	case body.CallID == "" || len(body.CallID) > maxCallIDLen:
		writeProblem(w, r, http.StatusUnprocessableEntity, codeInvalid,
			`field "call_id" is required: send the call_id of the approval_required event (at most 256 characters)`)
		return
	case body.Decision != runtime.AllowOnce && body.Decision != runtime.AllowAlways && body.Decision != runtime.DenyCall:
		writeProblem(w, r, http.StatusUnprocessableEntity, codeInvalid, `field "decision" must be allow_once, allow_always or deny`)
		return
	}
	id := r.PathValue("id")
	if _, err := s.o.Loop.Session(r.Context(), id); err != nil {
		sessionError(w, r, err)
		return
	}
	wait := r.URL.Query().Get("wait") != "false"
	var sub *runtime.Subscription
	done := func() {
		if sub != nil {
			sub.Close()
		}
	}
	if wait {
		// Follow first: what the turn does once answered is not missed.
		var err error
		if sub, err = s.o.Loop.FollowQueue(r.Context(), id, runtime.Live, waitQueue); err != nil {
			sessionError(w, r, err)
			return
		}
	}
	err := s.o.Loop.Approve(r.Context(), id, body.CallID, body.Decision)
	switch {
	case errors.Is(err, runtime.ErrNoApproval):
		done()
		writeProblem(w, r, http.StatusNotFound, codeNotFound,
			"no pending approval in session "+id+": the call was answered already, or its turn ended")
		return
	case errors.Is(err, runtime.ErrOtherApproval):
		done()
		writeProblem(w, r, http.StatusBadRequest, codeInvalid,
			"call_id "+clip(body.CallID, 64)+" is not the call waiting for a decision: GET the session to see which one is")
		return
	case err != nil:
		done()
		sessionError(w, r, err)
		return
	case !wait:
		writeJSON(w, http.StatusOK, map[string]string{"status": "accepted", "call_id": body.CallID, "decision": body.Decision})
		return
	}
	// Other calls of the same round may wait already: they are next.
	if p, err := s.o.Loop.Pending(r.Context(), id); err == nil && len(p) > 0 {
		done()
		s.reply(w, r, &turnOutcome{approval: &runtime.Event{CallID: p[0].CallID, Content: p[0].Command, ToolName: p[0].Tool}}, true)
		return
	}
	s.waitTurn(w, r, sub, func(e *runtime.Event) (keep, done bool) {
		return true, e.Type == runtime.EvTurnEnd
	}, true, 0)
}
