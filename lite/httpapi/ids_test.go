package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// A 100 KB session id or a 5,000-character agent name is a client's
// mistake (or an attack), answered 4xx with one sentence, never 500, and
// never echoed back whole.
func TestIDs_MalformedAre4xx(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	longID, longName := strings.Repeat("a", 100<<10), strings.Repeat("a", 5000)
	for _, c := range []struct {
		method, path, body, code string
	}{
		{"GET", "/api/v1/sessions/" + longID, "", "session_not_found"},
		{"DELETE", "/api/v1/sessions/" + longID, "", "session_not_found"},
		{"POST", "/api/v1/sessions/" + longID + "/messages", `{"content":"x"}`, "session_not_found"},
		{"POST", "/api/v1/sessions/" + longID + "/stream", `{"content":"x"}`, "session_not_found"},
		{"GET", "/api/v1/sessions/" + longID + "/events", "", "session_not_found"},
		{"GET", "/api/v1/sessions/..%2f..%2fetc/messages", "", "session_not_found"},
		{"GET", "/api/v1/sessions/a%00b", "", "session_not_found"},
		{"GET", "/api/v1/agents/" + longName, "", "agent_not_found"},
		{"GET", "/" + longID, "", "not_found"},
	} {
		resp := e.do(c.method, c.path, c.body)
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s %.60s: %.300s", c.method, c.path, data)
		assert.Contains(t, string(data), `"type":"urn:duragent:problem:not-found"`)
		assert.Contains(t, string(data), `"code":"`+c.code+`"`)
		assert.Less(t, len(data), 1024, "the answer does not echo the id")
	}
	for _, body := range []string{
		`{"agent":"` + longName + `"}`,
		`{"agent":"../../etc"}`,
		`{"agent":"assistant","chat_id":"` + longName + `"}`,
		`{"agent":"assistant","gateway":"` + longName + `"}`,
		`{"agent":"assistant","chat_id":"a\nb"}`,
	} {
		p := requireProblem(t, e.do("POST", "/api/v1/sessions", body), http.StatusUnprocessableEntity, "invalid_request")
		assert.Less(t, len(p.Detail), 200)
	}
}

// An agent whose files are invalid is the agent's problem, not the
// server's: 422 with the file:line sentence, for GET and for a new
// session alike.
func TestAgents_InvalidIs422(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	e.addBroken("broken")
	p := requireProblem(t, e.do("POST", "/api/v1/sessions", `{"agent":"broken"}`), http.StatusUnprocessableEntity, "agent_invalid")
	assert.Regexp(t, `agent\.yaml:\d+: .*temperature 9 is out of range`, p.Detail)
	p = requireProblem(t, e.do("GET", "/api/v1/agents/broken", ""), http.StatusUnprocessableEntity, "agent_invalid")
	assert.Regexp(t, `agent\.yaml:\d+: .*temperature 9 is out of range`, p.Detail)
}

// The public agent card lists every agent only to a caller the API would
// serve; anyone else sees server.public_agents.
func TestAgentCard_PublicAgents(t *testing.T) {
	const token = "0123456789abcdef0123"
	e := newAPIEnv(t, llmtest.Echo(), func(o *httpapi.Options) {
		o.APIToken, o.PublicAgents = token, []string{"helper", "absent"}
	})
	for _, name := range []string{"helper", "private"} {
		_, err := agents.WriteTemplate(e.cfg.AgentsDir, name)
		require.NoError(t, err)
	}
	skills := func(headers ...string) []string {
		var card struct{ Skills []struct{ ID string } }
		e.call("GET", "/.well-known/agent-card.json", "", http.StatusOK, &card, headers...)
		var out []string
		for _, s := range card.Skills {
			out = append(out, s.ID)
		}
		return out
	}
	assert.Equal(t, []string{"helper"}, skills(), "without a token: the public subset")
	assert.Equal(t, []string{"helper"}, skills("Authorization: Bearer wrong"))
	assert.Equal(t, []string{"assistant", "helper", "private"}, skills("Authorization: Bearer "+token))

	open := newAPIEnv(t, llmtest.Echo())
	var card struct{ Skills []struct{ ID string } }
	open.call("GET", "/.well-known/agent-card.json", "", http.StatusOK, &card)
	assert.Len(t, card.Skills, 1, "with no token set, loopback clients see all, as they see the API")
}

// A client waiting for a turn whose session is deleted is told so (404,
// "was deleted while its turn ran"), not that the runtime stopped (503);
// a stream gets an error event saying the same.
func TestSessions_DeletedMidTurn(t *testing.T) {
	asked := make(chan struct{}, 2)
	e := newAPIEnv(t, func(llmtest.RecordedRequest) llmtest.Reply {
		asked <- struct{}{} // the turn runs: the model was asked
		return llmtest.Reply{Text: "a long story", Fault: llmtest.Stall, FaultAfter: 1}
	})
	waiting, streaming := e.session(), e.session()

	answered := make(chan *http.Response, 1)
	go func() { answered <- e.do("POST", "/api/v1/sessions/"+waiting+"/messages", `{"content":"tell me"}`) }()
	<-asked
	e.call("DELETE", "/api/v1/sessions/"+waiting, "", http.StatusNoContent, nil)
	p := requireProblem(t, <-answered, http.StatusNotFound, "session_not_found")
	assert.Contains(t, p.Detail, "was deleted while its turn ran")

	resp := e.do("POST", "/api/v1/sessions/"+streaming+"/stream", `{"content":"tell me"}`)
	r := newSSEScan(resp.Body)
	<-asked
	e.call("DELETE", "/api/v1/sessions/"+streaming, "", http.StatusNoContent, nil)
	rest := r.all()
	require.NotEmpty(t, rest)
	last := rest[len(rest)-1]
	assert.Equal(t, "error", last.Name)
	var d struct{ Message string }
	last.decode(t, &d)
	assert.Contains(t, d.Message, "was deleted while its turn ran")
}
