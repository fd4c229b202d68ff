package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
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
	assert.Equal(t, "active", s.Status)
	assert.Regexp(t, `^session_[0-9A-HJKMNP-TV-Z]{26}$`, s.ID, "ids are session_<ULID>, as in Agnx")
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
	requireProblem(t, e.do("POST", "/api/v1/sessions", `{}`), http.StatusUnprocessableEntity, "invalid_request")
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
		MessageID             string `json:"message_id"`
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
	firstID := ans.MessageID
	assert.Regexp(t, `^msg_[0-9A-HJKMNP-TV-Z]{26}$`, firstID)

	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"use list_dir {}"}`, http.StatusOK, &ans)
	assert.Contains(t, ans.Content, "list_dir said:")

	// Agnx's conversation: the user's messages and the final answers, not
	// the tool steps between.
	var list struct {
		Messages []struct {
			Role, Content string
			MessageID     string `json:"message_id"`
			Seq           uint64
			Timestamp     time.Time
		}
	}
	e.call("GET", "/api/v1/sessions/"+sid+"/messages", "", http.StatusOK, &list)
	roles := []string{}
	for _, m := range list.Messages {
		roles = append(roles, m.Role)
		assert.Positive(t, m.Seq)
		assert.False(t, m.Timestamp.IsZero())
	}
	assert.Equal(t, []string{"user", "assistant", "user", "assistant"}, roles)
	assert.Equal(t, "hello", list.Messages[0].Content)
	assert.Equal(t, "echo: hello", list.Messages[1].Content)
	assert.Equal(t, firstID, list.Messages[1].MessageID, "the history names an answer as the reply did")
	assert.Empty(t, list.Messages[0].MessageID)
	assert.Equal(t, "use list_dir {}", list.Messages[2].Content)
	assert.Contains(t, list.Messages[3].Content, "list_dir said:")

	// limit keeps the first N.
	e.call("GET", "/api/v1/sessions/"+sid+"/messages?limit=3", "", http.StatusOK, &list)
	require.Len(t, list.Messages, 3)
	assert.Equal(t, "use list_dir {}", list.Messages[2].Content)
	e.call("GET", "/api/v1/sessions/"+sid+"/messages?limit=0", "", http.StatusOK, &list)
	assert.Empty(t, list.Messages)
	for _, bad := range []string{"-1", "x", "4294967296"} {
		p := requireProblem(t, e.do("GET", "/api/v1/sessions/"+sid+"/messages?limit="+bad, ""), http.StatusBadRequest, "invalid_request")
		assert.Contains(t, p.Detail, "limit")
	}
	requireProblem(t, e.do("GET", "/api/v1/sessions/nope/messages?limit=0", ""), http.StatusNotFound, "session_not_found")

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
	p := requireProblem(t, e.do("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"hi"}`), http.StatusInternalServerError, "provider_error")
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
	for _, d := range []string{"allow_once", "allow_always", "deny"} {
		p = requireProblem(t, e.do("POST", path, `{"call_id":"c1","command":"ls","decision":"`+d+`"}`), http.StatusNotFound, "not_found")
		assert.Contains(t, p.Detail, "no pending approval", "Agnx's CLI matches this text")
	}
	requireProblem(t, e.do("POST", "/api/v1/sessions/nope/approve", `{"call_id":"c1","decision":"deny"}`),
		http.StatusNotFound, "session_not_found")
}

// GET of a session waiting for a user's decision is paused and names the
// call, in the pending_approval Agnx's client reserves.
func TestSessions_PendingApproval(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	require.NoError(t, os.WriteFile(filepath.Join(e.cfg.AgentsDir, "assistant", "policy.yaml"),
		[]byte("apiVersion: agnx/v1alpha1\nkind: Policy\nmode: ask\n"), 0o644))
	sid := e.session()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := e.loop.Follow(ctx, sid, 0)
	require.NoError(t, err)
	defer sub.Close()
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		resp := e.do("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"use list_dir {}"}`)
		resp.Body.Close()
	}()
	var ask runtime.Event
	for ev := range sub.C() {
		if ev.Type == runtime.EvApprovalRequired {
			ask = ev
			break
		}
	}
	require.NotEmpty(t, ask.CallID, "the turn asked")

	var got struct {
		Status  string
		Pending *struct {
			CallID  string `json:"call_id"`
			Command string `json:"command"`
		} `json:"pending_approval"`
	}
	e.call("GET", "/api/v1/sessions/"+sid, "", http.StatusOK, &got)
	assert.Equal(t, "paused", got.Status)
	require.NotNil(t, got.Pending)
	assert.Equal(t, ask.CallID, got.Pending.CallID)
	assert.Equal(t, ask.Content, got.Pending.Command)

	e.call("POST", "/api/v1/sessions/"+sid+"/approve", `{"call_id":"`+ask.CallID+`","decision":"deny"}`, http.StatusOK, nil)
	<-answered
	resp := e.do("GET", "/api/v1/sessions/"+sid, "")
	var raw map[string]any
	require.NoError(t, jsonDecode(resp, &raw))
	assert.NotContains(t, raw, "pending_approval", "none once decided")
	assert.Equal(t, "active", raw["status"])
}

// A message to a session that has ended is 404, as Agnx answers for a
// session that takes no more messages (it has no 410).
func TestSessions_EndedTakesNoMessage(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	at := time.Now().Add(-time.Hour)
	info, err := e.loop.ImportSession(context.Background(), []runtime.Event{
		{Type: runtime.EvSessionStart, Agent: "assistant", Time: at},
		{Type: runtime.EvUserMessage, Content: "hi", Time: at},
		{Type: runtime.EvSessionEnd, Reason: "expired", Time: at},
	})
	require.NoError(t, err)
	var got sessionOut
	e.call("GET", "/api/v1/sessions/"+info.ID, "", http.StatusOK, &got)
	assert.Equal(t, "completed", got.Status)
	p := requireProblem(t, e.do("POST", "/api/v1/sessions/"+info.ID+"/messages", `{"content":"x"}`), http.StatusNotFound, "session_ended")
	assert.Equal(t, "session "+info.ID+" has ended: start a new one with POST /api/v1/sessions", p.Detail)
}
