package httpapi_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// writeAgent writes an agent from the template, then changes its
// agent.yaml with edit.
func (e *apiEnv) writeAgent(name string, edit func(string) string) {
	e.t.Helper()
	dir, err := agents.WriteTemplate(e.cfg.AgentsDir, name)
	require.NoError(e.t, err)
	file := filepath.Join(dir, agents.FileName)
	data, err := os.ReadFile(file)
	require.NoError(e.t, err)
	require.NoError(e.t, os.WriteFile(file, []byte(edit(string(data))), 0o644))
}

// An agent that cannot be built for what its agent.yaml says is the
// agent's problem, not the server's: every route that builds it answers
// 422 with the file and line of the entry at fault (an unknown built-in
// tool), or with the file and the limit it is over (an agent.yaml over
// 1 MiB), never 500.
func TestAgents_UnbuildableIs422WithFileLine(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	e.writeAgent("nosuch", func(s string) string {
		return strings.Replace(s, "    - type: builtin\n      name: list_dir", "    - type: builtin\n      name: list_dir\n    - type: builtin\n      name: teleport", 1)
	})
	e.writeAgent("huge", func(s string) string {
		return s + "# " + strings.Repeat("padding ", (1<<20)/8) + "\n"
	})
	yaml, err := os.ReadFile(filepath.Join(e.cfg.AgentsDir, "nosuch", agents.FileName))
	require.NoError(t, err)
	line := 1 + strings.Count(string(yaml[:strings.Index(string(yaml), "name: teleport")]), "\n")

	for _, c := range []struct{ agent, want string }{
		{"nosuch", `agents/nosuch/agent\.yaml:` + strconv.Itoa(line) + `: there is no built-in tool "teleport" \(available: bash, .*\): fix its name in spec\.tools$`},
		{"huge", `agents/huge/agent\.yaml: is larger than 1 MiB, the most an agent's file may be: shorten it; long texts belong in prompt files, skills or the agent's memory folder$`},
	} {
		p := requireProblem(t, e.do("POST", "/api/v1/sessions", `{"agent":"`+c.agent+`"}`), http.StatusUnprocessableEntity, "agent_invalid")
		assert.Regexp(t, c.want, p.Detail, "POST /api/v1/sessions with %s", c.agent)
		p = requireProblem(t, e.do("GET", "/api/v1/agents/"+c.agent, ""), http.StatusUnprocessableEntity, "agent_invalid")
		assert.Regexp(t, c.want, p.Detail, "GET /api/v1/agents/%s", c.agent)
		resp := e.do("POST", "/v1/chat/completions", `{"model":"`+c.agent+`","messages":[{"role":"user","content":"hi"}]}`)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "the OpenAI endpoint's invalid model")
	}
}
