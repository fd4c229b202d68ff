package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// sessionJSON is a session in API responses.
type sessionJSON struct {
	ID        string    `json:"session_id"`
	Agent     string    `json:"agent"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Gateway   string    `json:"gateway,omitempty"`
	ChatID    string    `json:"chat_id,omitempty"`
	Turns     int       `json:"turns"`
	LastSeq   uint64    `json:"last_seq"`
	Preview   string    `json:"preview,omitempty"`
	Usage     usageJSON `json:"usage"`
	// ParentID is the session that spawned this one with the agent tool
	// (a subagent), a lite extension; Agnx's sessions have none.
	ParentID string `json:"parent_id,omitempty"`
	// Principal is who the session speaks for (owner, telegram:user:123,
	// openai:<digest of the caller key>, webhook:<name>...), a lite
	// extension: which sessions its tools may read follows from it.
	Principal string `json:"principal,omitempty"`
	// PendingApproval is the tool call waiting for a user's decision, on
	// GET of one session: the extension Agnx's client reserves. It has
	// expires_at only when runtime.approval_timeout_seconds is set (by
	// default approvals never expire).
	PendingApproval *pendingJSON `json:"pending_approval,omitempty"`
}

type pendingJSON struct {
	CallID    string     `json:"call_id"`
	Command   string     `json:"command"`
	ToolName  string     `json:"tool_name,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

type usageJSON struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Total      int `json:"total_tokens"`
}

func toUsage(u runtime.Usage) usageJSON {
	return usageJSON{u.PromptTokens, u.CompletionTokens, u.Total()}
}

func toSession(i runtime.SessionInfo) sessionJSON {
	return sessionJSON{ID: i.ID, Agent: i.Agent, Status: string(i.Status), CreatedAt: i.Created.UTC(), UpdatedAt: i.Updated.UTC(),
		Gateway: i.Gateway, ChatID: i.ChatID, Turns: i.Turns, LastSeq: i.LastSeq, Preview: i.Preview, Usage: toUsage(i.Usage),
		ParentID: i.Parent, Principal: i.Principal.String()}
}

// SessionJSON is a session as the API shows it (parent_id included), for
// the CLI's JSON output.
func SessionJSON(i runtime.SessionInfo) any { return toSession(i) }

// sessionError answers for an error of the loop or the store. An agent
// whose files are invalid is 422 with the file:line sentence: the request
// was fine, the agent it names cannot be built until its files are fixed.
func sessionError(w http.ResponseWriter, r *http.Request, err error) {
	var invalid *agents.Error
	var lost *runtime.TurnLostError
	switch {
	case errors.Is(err, runtime.ErrSessionNotFound):
		writeProblem(w, r, http.StatusNotFound, codeSessionNotFound, "no session "+r.PathValue("id"))
	case errors.Is(err, runtime.ErrSessionEnded):
		// Agnx has no ended session that takes requests (its completed
		// sessions are deleted ones): 404, as it answers for those.
		writeProblem(w, r, http.StatusNotFound, codeSessionEnded,
			"session "+r.PathValue("id")+" has ended: start a new one with POST /api/v1/sessions")
	case errors.Is(err, runtime.ErrAgentNotFound):
		writeProblem(w, r, http.StatusNotFound, codeAgentNotFound, err.Error())
	case errors.As(err, &invalid):
		writeProblem(w, r, http.StatusUnprocessableEntity, codeAgentInvalid, err.Error())
	case errors.As(err, &lost):
		// A resend of a message whose turn the full disk ended: stored
		// once, answered as the first time.
		writeProblem(w, r, http.StatusInternalServerError, codeInsufficientStorage, err.Error())
	case errors.Is(err, runtime.ErrDiskFull):
		// The commit was refused whole: nothing of the request is stored.
		writeProblem(w, r, http.StatusInsufficientStorage, codeInsufficientStorage,
			"the disk is full, so nothing of the request was stored: free some space, then send it again")
	case errors.Is(err, runtime.ErrBusy):
		w.Header().Set("Retry-After", "5")
		writeProblem(w, r, http.StatusServiceUnavailable, codeUnavailable, err.Error())
	case errors.Is(err, runtime.ErrClosed):
		writeProblem(w, r, http.StatusServiceUnavailable, codeUnavailable, err.Error())
	case r.Context().Err() != nil:
		// The client is gone; nobody reads the answer.
	default:
		writeProblem(w, r, http.StatusInternalServerError, codeInternal, err.Error())
	}
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	list, err := s.o.Loop.Sessions(r.Context())
	if err != nil {
		sessionError(w, r, err)
		return
	}
	// ?agent= and ?parent= (a session's subagents) narrow the list.
	agent, parent := r.URL.Query().Get("agent"), r.URL.Query().Get("parent")
	out := make([]sessionJSON, 0, len(list))
	for _, i := range list {
		if (agent == "" || i.Agent == agent) && (parent == "" || i.Parent == parent) {
			out = append(out, toSession(i))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Agent   string `json:"agent"`
		Gateway string `json:"gateway"`
		ChatID  string `json:"chat_id"`
	}
	if status, err := decode(r, &body); err != nil {
		writeProblem(w, r, status, problemCode(status), err.Error())
		return
	}
	if msg := checkNewSession(body.Agent, body.Gateway, body.ChatID); msg != "" {
		writeProblem(w, r, http.StatusUnprocessableEntity, codeInvalid, msg)
		return
	}
	if body.Gateway == "" {
		body.Gateway = "http"
	}
	// Whoever holds the API token is the owner, whatever gateway and chat
	// the body names.
	info, err := s.o.Loop.CreateSession(r.Context(), runtime.NewSession{Agent: body.Agent, Gateway: body.Gateway, ChatID: body.ChatID,
		Principal: agents.Owner()})
	if err != nil {
		sessionError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/v1/sessions/"+info.ID)
	writeJSON(w, http.StatusCreated, toSession(info))
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	info, err := s.o.Loop.Session(r.Context(), r.PathValue("id"))
	if err != nil {
		sessionError(w, r, err)
		return
	}
	j := toSession(info)
	if info.Status == runtime.SessionPaused {
		if j.PendingApproval, err = s.pendingApproval(r, info.ID); err != nil {
			sessionError(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, j)
}

// pendingApproval returns the oldest call of the session waiting for a
// decision, or nil.
func (s *Server) pendingApproval(r *http.Request, id string) (*pendingJSON, error) {
	list, err := s.o.Loop.Pending(r.Context(), id)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	p := &pendingJSON{CallID: list[0].CallID, Command: list[0].Command, ToolName: list[0].Tool}
	if at := list[0].ExpiresAt; !at.IsZero() {
		at = at.UTC()
		p.ExpiresAt = &at
	}
	return p, nil
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	if err := s.o.Loop.DeleteSession(r.Context(), r.PathValue("id")); err != nil {
		sessionError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.o.Loop.Session(r.Context(), id); err != nil {
		sessionError(w, r, err)
		return
	}
	ok, err := s.o.Loop.Cancel(r.Context(), id)
	if err != nil {
		sessionError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"cancelled": ok})
}

// approve answers a tool call waiting for a user's decision (approve.go).
func (s *Server) approve(w http.ResponseWriter, r *http.Request) { s.approveCall(w, r) }

// checkNewSession returns the sentence for a 400 when a field of POST
// /sessions is not what it must be, or "".
func checkNewSession(agent, gateway, chatID string) string {
	switch {
	case agent == "":
		return `field "agent" is required: name the agent to talk to`
	case !validAgentName(agent):
		return `field "agent" is not an agent name: names are at most 128 letters, digits and hyphens (GET /api/v1/agents lists them)`
	case gateway != "" && !validAgentName(gateway):
		return `field "gateway" must be at most 128 letters, digits and hyphens, like "http" or "telegram"`
	case !validChatID(chatID):
		return `field "chat_id" must be at most 256 characters, with no control characters`
	}
	return ""
}

func problemCode(status int) string {
	if status == http.StatusRequestEntityTooLarge {
		return codeTooLarge
	}
	return codeInvalid
}
