package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// POST /compact summarises all but the newest exchange, says what it
// did, and refuses while a turn runs.
func TestCompact(t *testing.T) {
	e := newAPIEnv(t, func(req llmtest.RecordedRequest) llmtest.Reply {
		switch {
		case len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You summarise a conversation"):
			return llmtest.Reply{Text: "the user said one"}
		case strings.Contains(req.LastUser(), "slow"):
			return llmtest.Reply{Text: "a long story", Fault: llmtest.Stall, FaultAfter: 1}
		}
		return llmtest.Echo()(req)
	})
	sid := e.session()
	var res struct {
		Method       string
		TokensBefore int `json:"tokens_before"`
		TokensAfter  int `json:"tokens_after"`
		CoversTo     uint64
	}
	e.call("POST", "/api/v1/sessions/"+sid+"/compact", "", http.StatusOK, &res)
	assert.Equal(t, "none", res.Method, "an empty session has nothing to compact")

	for _, m := range []string{"one", "two"} {
		long := m + strings.Repeat(" and more", 100)
		e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"`+long+`"}`, http.StatusOK, nil)
	}
	e.call("POST", "/api/v1/sessions/"+sid+"/compact", "", http.StatusOK, &res)
	assert.Equal(t, "summary", res.Method)
	assert.Less(t, res.TokensAfter, res.TokensBefore)

	resp := e.do("POST", "/api/v1/sessions/"+sid+"/stream", `{"content":"slow please"}`)
	defer resp.Body.Close()
	r := newSSEScan(resp.Body)
	_, ok := r.next() // start: the turn runs
	require.True(t, ok)
	requireProblem(t, e.do("POST", "/api/v1/sessions/"+sid+"/compact", ""), http.StatusConflict, "turn_running")
	requireProblem(t, e.do("POST", "/api/v1/sessions/nope/compact", ""), http.StatusNotFound, "session_not_found")
}

// POST /end ends a session: it takes no more messages, ending it again
// does nothing, and a running turn is refused with 409.
func TestEndSession(t *testing.T) {
	e := newAPIEnv(t, func(req llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(req.LastUser(), "slow") {
			return llmtest.Reply{Text: "a long story", Fault: llmtest.Stall, FaultAfter: 1}
		}
		return llmtest.Echo()(req)
	})
	busy := e.session()
	resp := e.do("POST", "/api/v1/sessions/"+busy+"/stream", `{"content":"slow please"}`)
	defer resp.Body.Close()
	_, ok := newSSEScan(resp.Body).next() // start: the turn runs
	require.True(t, ok)
	requireProblem(t, e.do("POST", "/api/v1/sessions/"+busy+"/end", ""), http.StatusConflict, "turn_running")

	sid := e.session()
	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"hi"}`, http.StatusOK, nil)
	e.call("POST", "/api/v1/sessions/"+sid+"/end", "", http.StatusNoContent, nil)
	e.call("POST", "/api/v1/sessions/"+sid+"/end", "", http.StatusNoContent, nil)
	var info struct{ Status string }
	e.call("GET", "/api/v1/sessions/"+sid, "", http.StatusOK, &info)
	assert.Equal(t, "completed", info.Status)
	requireProblem(t, e.do("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"more"}`), http.StatusNotFound, "session_ended")
	requireProblem(t, e.do("POST", "/api/v1/sessions/nope/end", ""), http.StatusNotFound, "session_not_found")
}
