package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

type sessionOut struct {
	ID        string    `json:"session_id"`
	Agent     string    `json:"agent"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Gateway   string    `json:"gateway"`
	ChatID    string    `json:"chat_id"`
	Turns     int       `json:"turns"`
	LastSeq   uint64    `json:"last_seq"`
	Preview   string    `json:"preview"`
	Usage     struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
		Total      int `json:"total_tokens"`
	} `json:"usage"`
}

func TestSessions_CRUD(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	var list struct{ Sessions []sessionOut }
	e.call("GET", "/api/v1/sessions", "", http.StatusOK, &list)
	assert.NotNil(t, list.Sessions, "an empty list is [], not null")
	assert.Empty(t, list.Sessions)

	resp := e.do("POST", "/api/v1/sessions", `{"agent":"assistant","chat_id":"c1"}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var s sessionOut
	require.NoError(t, jsonDecode(resp, &s))
	assert.Equal(t, "/api/v1/sessions/"+s.ID, resp.Header.Get("Location"))
	assert.Equal(t, "assistant", s.Agent)
	assert.Equal(t, "http", s.Gateway, "the gateway defaults to http")
	assert.Equal(t, "c1", s.ChatID)
	assert.NotEmpty(t, s.Status)
	assert.WithinDuration(t, time.Now(), s.CreatedAt, time.Minute)

	var got sessionOut
	e.call("GET", "/api/v1/sessions/"+s.ID, "", http.StatusOK, &got)
	assert.Equal(t, s.ID, got.ID)
	e.postStream(s.ID, "hello")
	e.call("GET", "/api/v1/sessions/"+s.ID, "", http.StatusOK, &got)
	assert.Equal(t, 1, got.Turns)
	assert.Positive(t, got.Usage.Total)
	assert.Equal(t, e.lastSeq(s.ID), got.LastSeq)

	other := e.session()
	e.call("GET", "/api/v1/sessions", "", http.StatusOK, &list)
	assert.Len(t, list.Sessions, 2)
	e.call("GET", "/api/v1/sessions?agent=nobody", "", http.StatusOK, &list)
	assert.Empty(t, list.Sessions)

	e.call("DELETE", "/api/v1/sessions/"+other, "", http.StatusNoContent, nil)
	requireProblem(t, e.do("GET", "/api/v1/sessions/"+other, ""), http.StatusNotFound, "session_not_found")
	requireProblem(t, e.do("DELETE", "/api/v1/sessions/"+other, ""), http.StatusNotFound, "session_not_found")
	e.call("GET", "/api/v1/sessions", "", http.StatusOK, &list)
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, s.ID, list.Sessions[0].ID)

	p := requireProblem(t, e.do("POST", "/api/v1/sessions", `{"agent":"ghost"}`), http.StatusNotFound, "agent_not_found")
	assert.Contains(t, p.Detail, "ghost")
	requireProblem(t, e.do("POST", "/api/v1/sessions", `{}`), http.StatusBadRequest, "invalid_request")
}

func TestMessages_SendAndList(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	var msgs struct{ Messages []map[string]any }
	e.call("GET", "/api/v1/sessions/"+sid+"/messages", "", http.StatusOK, &msgs)
	assert.NotNil(t, msgs.Messages)
	assert.Empty(t, msgs.Messages)

	var ans struct {
		Role, Content, Status string
		Seq                   uint64
		ToolCalls             []any `json:"tool_calls"`
		Usage                 struct {
			Total int `json:"total_tokens"`
		}
	}
	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"hello","sender_id":"u1","sender_name":"Ann"}`, http.StatusOK, &ans)
	assert.Equal(t, "assistant", ans.Role)
	assert.Equal(t, "echo: hello", ans.Content)
	assert.Equal(t, "completed", ans.Status)
	assert.NotNil(t, ans.ToolCalls)
	assert.Positive(t, ans.Usage.Total)
	assert.Equal(t, e.lastSeq(sid), ans.Seq, "seq is the turn_end's")

	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"use list_dir {}"}`, http.StatusOK, &ans)
	assert.Contains(t, ans.Content, "list_dir said:")

	var list struct {
		Messages []struct {
			Seq        uint64
			Role       string
			Content    string
			Timestamp  time.Time
			ToolCalls  []struct{ ID, Name, Arguments string } `json:"tool_calls"`
			ToolCallID string                                 `json:"tool_call_id"`
			ToolName   string                                 `json:"tool_name"`
		}
	}
	e.call("GET", "/api/v1/sessions/"+sid+"/messages", "", http.StatusOK, &list)
	roles := []string{}
	for _, m := range list.Messages {
		roles = append(roles, m.Role)
		assert.Positive(t, m.Seq)
		assert.False(t, m.Timestamp.IsZero())
	}
	assert.Equal(t, []string{"user", "assistant", "user", "assistant", "tool", "assistant"}, roles)
	assert.Equal(t, "hello", list.Messages[0].Content)
	call := list.Messages[3].ToolCalls
	require.Len(t, call, 1)
	assert.Equal(t, "list_dir", call[0].Name)
	assert.Equal(t, call[0].ID, list.Messages[4].ToolCallID)
	assert.Equal(t, "list_dir", list.Messages[4].ToolName)

	requireProblem(t, e.do("GET", "/api/v1/sessions/nope/messages", ""), http.StatusNotFound, "session_not_found")
	requireProblem(t, e.do("POST", "/api/v1/sessions/nope/messages", `{"content":"x"}`), http.StatusNotFound, "session_not_found")
	requireProblem(t, e.do("POST", "/api/v1/sessions/nope/stream", `{"content":"x"}`), http.StatusNotFound, "session_not_found")
}

// A model failure ends the turn as failed: the synchronous answer is a
// 502 problem carrying the one sentence, and the stream ends with error
// then done {status: failed}.
func TestMessages_ModelFailure(t *testing.T) {
	e := newAPIEnv(t, llmtest.Script(
		llmtest.Reply{Status: 404, ErrorMessage: `model "qwen3:1.7b" not found, try pulling it first`},
		llmtest.Reply{Status: 404, ErrorMessage: `model "qwen3:1.7b" not found, try pulling it first`},
	))
	sid := e.session()
	p := requireProblem(t, e.do("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"hi"}`), http.StatusBadGateway, "provider_error")
	assert.Contains(t, p.Detail, "qwen3:1.7b")

	evs := e.postStream(sid, "again")
	require.GreaterOrEqual(t, len(evs), 3)
	errEv := evs[len(evs)-2]
	require.Equal(t, "error", errEv.Name)
	var d struct{ Code, Message string }
	errEv.decode(t, &d)
	assert.Equal(t, "model_not_found", d.Code)
	assert.Contains(t, d.Message, "qwen3:1.7b")
	var done struct{ Status string }
	evs[len(evs)-1].decode(t, &done)
	assert.Equal(t, "failed", done.Status)
}

func TestCancel(t *testing.T) {
	e := newAPIEnv(t, llmtest.Script(llmtest.Reply{Text: "a long story", Fault: llmtest.Stall, FaultAfter: 1}))
	sid := e.session()
	var c struct{ Cancelled bool }
	e.call("POST", "/api/v1/sessions/"+sid+"/cancel", "", http.StatusOK, &c)
	assert.False(t, c.Cancelled, "no turn runs")

	resp := e.do("POST", "/api/v1/sessions/"+sid+"/stream?events=all", `{"content":"tell me"}`)
	r := newSSEScan(resp.Body)
	for _, want := range []string{"start", "token"} {
		ev, ok := r.next()
		require.True(t, ok)
		require.Equal(t, want, ev.Name)
	}
	e.call("POST", "/api/v1/sessions/"+sid+"/cancel", "", http.StatusOK, &c)
	assert.True(t, c.Cancelled)
	rest := r.all()
	require.Len(t, rest, 2)
	assert.Equal(t, "message", rest[0].Name, "the part the user saw is kept")
	assert.Equal(t, "cancelled", rest[1].Name)
	assert.Equal(t, "{}", rest[1].Data)
	assert.True(t, rest[1].HasID)

	requireProblem(t, e.do("POST", "/api/v1/sessions/nope/cancel", ""), http.StatusNotFound, "session_not_found")
}

func TestApprove(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	path := "/api/v1/sessions/" + sid + "/approve"
	p := requireProblem(t, e.do("POST", path, `{"call_id":"c1","decision":"maybe"}`), http.StatusUnprocessableEntity, "invalid_request")
	assert.Contains(t, p.Detail, `"decision"`)
	requireProblem(t, e.do("POST", path, `{"call_id":"c1"}`), http.StatusUnprocessableEntity, "invalid_request")
	p = requireProblem(t, e.do("POST", path, `{"decision":"deny"}`), http.StatusUnprocessableEntity, "invalid_request")
	assert.Contains(t, p.Detail, `"call_id"`)
	p = requireProblem(t, e.do("POST", path, `{"call_id":"c1","decision":"allow","extra":1}`), http.StatusBadRequest, "invalid_request")
	assert.Contains(t, p.Detail, `"extra"`)
	for _, d := range []string{"allow_once", "allow_always", "deny"} {
		p = requireProblem(t, e.do("POST", path, `{"call_id":"c1","command":"ls","decision":"`+d+`"}`), http.StatusNotFound, "not_found")
		assert.Contains(t, p.Detail, "no pending approval", "Agnx's CLI matches this text")
	}
	requireProblem(t, e.do("POST", "/api/v1/sessions/nope/approve", `{"call_id":"c1","decision":"deny"}`),
		http.StatusNotFound, "session_not_found")
}
