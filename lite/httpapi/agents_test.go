package httpapi_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// addBroken writes an agent whose agent.yaml has a misspelt key.
func (e *apiEnv) addBroken(name string) {
	e.t.Helper()
	dir, err := agents.WriteTemplate(e.cfg.AgentsDir, name)
	require.NoError(e.t, err)
	file := filepath.Join(dir, agents.FileName)
	data, err := os.ReadFile(file)
	require.NoError(e.t, err)
	data = []byte(strings.Replace(string(data), "temperature:", "temperature: 9 #", 1))
	require.NoError(e.t, os.WriteFile(file, data, 0o644))
}

func TestAgents_ListAndGet(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	e.addBroken("broken")

	var list struct{ Agents []httpapi.AgentInfo }
	e.call("GET", "/api/v1/agents", "", http.StatusOK, &list)
	require.Len(t, list.Agents, 2)
	assert.Equal(t, httpapi.AgentInfo{Name: "assistant", Description: "A friendly general-purpose assistant.",
		Version: "1", Provider: "ollama", Model: "qwen3:1.7b"}, list.Agents[0])
	assert.Equal(t, "broken", list.Agents[1].Name)
	assert.Regexp(t, `agent\.yaml:\d+: .*temperature 9 is out of range`, list.Agents[1].Err, "an invalid agent is listed with its error")

	var a struct {
		Name, Description, Version string
		Model                      struct {
			Provider, Name string
			Temperature    float64
		}
		Session struct {
			OnDisconnect      string `json:"on_disconnect"`
			MaxToolIterations int    `json:"max_tool_iterations"`
		}
		Tools []string
	}
	e.call("GET", "/api/v1/agents/assistant", "", http.StatusOK, &a)
	assert.Equal(t, "assistant", a.Name)
	assert.Equal(t, "qwen3:1.7b", a.Model.Name)
	assert.InDelta(t, 0.7, a.Model.Temperature, 1e-9)
	assert.Equal(t, "pause", a.Session.OnDisconnect)
	assert.Equal(t, []string{"builtin:read_file", "builtin:list_dir"}, a.Tools)

	p := requireProblem(t, e.do("GET", "/api/v1/agents/broken", ""), http.StatusUnprocessableEntity, "agent_invalid")
	assert.Regexp(t, `agent\.yaml:\d+: .*temperature 9 is out of range`, p.Detail, "the problem names file:line")
	p = requireProblem(t, e.do("GET", "/api/v1/agents/ghost", ""), http.StatusNotFound, "agent_not_found")
	assert.Contains(t, p.Detail, "ghost")
	requireProblem(t, e.do("GET", "/api/v1/agents/Not_Valid", ""), http.StatusNotFound, "agent_not_found")
}

func TestAgentCard(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo(), func(o *httpapi.Options) { o.BaseURL = "http://127.0.0.1:8080" })
	e.addBroken("broken")
	resp := e.do("GET", "/.well-known/agent-card.json", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var card struct {
		ProtocolVersion    string `json:"protocolVersion"`
		Name               string
		Description        string
		URL                string
		PreferredTransport string `json:"preferredTransport"`
		Version            string
		Capabilities       map[string]bool
		DefaultInputModes  []string `json:"defaultInputModes"`
		DefaultOutputModes []string `json:"defaultOutputModes"`
		Skills             []struct {
			ID, Name, Description string
			Tags                  []string
		}
	}
	require.NoError(t, jsonDecode(resp, &card))
	assert.Equal(t, "agnx-lite", card.Name)
	assert.NotEmpty(t, card.ProtocolVersion)
	assert.Equal(t, "http://127.0.0.1:8080/api/v1", card.URL)
	assert.Equal(t, "v-test", card.Version)
	assert.True(t, card.Capabilities["streaming"])
	assert.Equal(t, []string{"text/plain"}, card.DefaultInputModes)
	require.Len(t, card.Skills, 1, "invalid agents are not offered")
	assert.Equal(t, "assistant", card.Skills[0].ID)
	assert.Equal(t, "A friendly general-purpose assistant.", card.Skills[0].Description)
	assert.Equal(t, []string{"ollama"}, card.Skills[0].Tags)
}
