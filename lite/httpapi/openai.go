package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// The OpenAI-compatible endpoint: GET /v1/models lists the agents, POST
// /v1/chat/completions runs a turn of the agent named in "model", with
// its own prompt, tools, sandbox and policy. Each caller has one durable
// session per agent, kept as a gateway chat ("openai", chat id
// "<agent>:<key>") in the store's kv as lite/chats keeps them, so it
// survives restarts; the key is the body's "user", else the header
// X-Agnx-Session-Key, else "default". Callers are authorized as on
// /api/v1, but refusals are in OpenAI's error shape (access oaAPI).

// oaGateway is the gateway name of the endpoint's sessions.
const oaGateway = "openai"

// oaDeniedNote is the sentence a client is told when a tool call needed
// an approval it cannot give: the call was denied and the turn went on.
const oaDeniedNote = "an OpenAI client cannot answer it: send the header X-Agnx-Approvals: wait to answer it in the web UI instead, or allow the tool in the agent's policy"

type oaModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// oaModels lists the agents whose files are valid as models.
func (s *Server) oaModels(w http.ResponseWriter, r *http.Request) {
	list, err := s.o.Agents.List()
	if err != nil {
		writeOAError(w, http.StatusInternalServerError, oaServer, "", "", err.Error())
		return
	}
	out := make([]oaModel, 0, len(list))
	for _, a := range list {
		if a.Err == "" {
			out = append(out, oaModel{ID: a.Name, Object: "model", Created: s.started.Unix(), OwnedBy: "agnx-lite"})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": out})
}

// oaChat runs a turn and answers with its reply, or streams it.
func (s *Server) oaChat(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		status, msg := decodeError(err)
		writeOAError(w, status, oaInvalidRequest, "", "", msg.Error())
		return
	}
	t, bad := parseChatRequest(data)
	if bad != nil {
		writeOAError(w, bad.status, oaInvalidRequest, "", bad.param, bad.msg)
		return
	}
	key := t.user
	if key == "" {
		key = r.Header.Get(SessionKeyHeader)
		if !validChatID(key) {
			writeOAError(w, http.StatusBadRequest, oaInvalidRequest, "", "",
				SessionKeyHeader+" must be at most 256 characters, with no control characters")
			return
		}
	}
	if key == "" {
		key = "default"
	}
	if _, err := s.o.Agents.Get(t.agent); err != nil {
		var invalid *agents.Error
		if errors.As(err, &invalid) {
			writeOAError(w, http.StatusBadRequest, oaInvalidRequest, "model_invalid", "model", err.Error())
			return
		}
		writeOAError(w, http.StatusNotFound, oaInvalidRequest, "model_not_found", "model",
			"no agent "+t.agent+": GET /v1/models lists them")
		return
	}
	sid, err := s.oaSession(r.Context(), t.agent, key)
	if err != nil {
		oaSessionError(w, r, err)
		return
	}
	if t.stream && !streamSlot(w, r) {
		return
	}
	queue := waitQueue
	if t.stream {
		queue = 0 // tokens go out as they come
	}
	sub, err := s.o.Loop.FollowQueue(r.Context(), sid, runtime.Live, queue)
	if err != nil {
		oaSessionError(w, r, err)
		return
	}
	sent, err := s.o.Loop.Send(r.Context(), sid, runtime.Input{Content: t.input, SenderID: key})
	if err != nil {
		sub.Close()
		oaSessionError(w, r, err)
		return
	}
	w.Header().Set("X-Agnx-Session-Id", sid)
	c := &oaCall{s: s, sid: sid, sub: sub, f: newTurnFollower(sent), id: newCompletionID(), model: t.agent, created: time.Now().Unix(),
		wait: strings.EqualFold(r.Header.Get(ApprovalsHeader), "wait")}
	if t.stream {
		c.stream(w, r, t.includeUsage)
		return
	}
	c.complete(w, r)
}

// oaSession returns the caller's session with agent, starting one when
// there is none or it has ended. The mapping is the chat's kv entry, as
// lite/chats writes it.
func (s *Server) oaSession(ctx context.Context, agent, key string) (string, error) {
	s.oaMu.Lock() // two first requests of a caller start one session
	defer s.oaMu.Unlock()
	chatID := agent + ":" + key
	kvKey := "chat/" + oaGateway + "/" + chatID
	var entry struct {
		Session string `json:"session"`
		Agent   string `json:"agent"`
	}
	data, err := s.o.Loop.KV(ctx, kvKey)
	if err != nil {
		return "", err
	}
	if data != nil && json.Unmarshal(data, &entry) == nil && entry.Session != "" {
		info, err := s.o.Loop.Session(ctx, entry.Session)
		if err == nil && info.Status != runtime.SessionCompleted {
			return entry.Session, nil
		}
	}
	info, err := s.o.Loop.CreateSession(ctx, runtime.NewSession{Agent: agent, Gateway: oaGateway, ChatID: chatID,
		Principal: agents.OpenAIPrincipal(key)})
	if err != nil {
		return "", err
	}
	entry.Session, entry.Agent = info.ID, agent
	data, _ = json.Marshal(entry)
	if err := s.o.Loop.PutKV(ctx, kvKey, data); err != nil {
		return "", err
	}
	return info.ID, nil
}

// oaSessionError answers an error of the agents, the loop or the store
// in OpenAI's shape.
func oaSessionError(w http.ResponseWriter, r *http.Request, err error) {
	var invalid *agents.Error
	switch {
	case errors.Is(err, runtime.ErrAgentNotFound), errors.Is(err, fs.ErrNotExist):
		writeOAError(w, http.StatusNotFound, oaInvalidRequest, "model_not_found", "model",
			"no agent by that name: GET /v1/models lists them")
	case errors.Is(err, runtime.ErrSessionNotFound), errors.Is(err, runtime.ErrSessionEnded):
		// Deleted or ended between finding it and sending: the next
		// request starts a new one.
		writeOAError(w, http.StatusConflict, oaInvalidRequest, "session_gone", "", err.Error()+": send the request again")
	case errors.As(err, &invalid):
		writeOAError(w, http.StatusBadRequest, oaInvalidRequest, "model_invalid", "model", err.Error())
	case errors.Is(err, runtime.ErrBusy), errors.Is(err, runtime.ErrClosed):
		w.Header().Set("Retry-After", "5")
		writeOAError(w, http.StatusServiceUnavailable, oaServer, "", "", err.Error())
	case r.Context().Err() != nil:
		// The client is gone; nobody reads the answer.
	default:
		writeOAError(w, http.StatusInternalServerError, oaServer, "", "", err.Error())
	}
}

// newCompletionID names a completion: chatcmpl- and 24 random hex digits.
func newCompletionID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "chatcmpl-" + hex.EncodeToString(b[:])
}
