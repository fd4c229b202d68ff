package httpapi_test

import (
	"encoding/json"
	"io"
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

	resp := e.do("GET", "/api/v1/agents", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var list map[string][]map[string]any
	require.NoError(t, jsonDecode(resp, &list))
	assert.Equal(t, []map[string]any{{"name": "assistant", "description": "A friendly general-purpose assistant.", "version": "1"}},
		list["agents"], "Agnx lists the agents that load, with name, description and version")
	require.Len(t, list["invalid"], 1, "an invalid agent is listed apart (an extension)")
	assert.Equal(t, "broken", list["invalid"][0]["name"])
	assert.Regexp(t, `agent\.yaml:\d+: .*temperature 9 is out of range`, list["invalid"][0]["error"], "with its error")

	var a httpapi.Agent
	e.call("GET", "/api/v1/agents/assistant", "", http.StatusOK, &a)
	assert.Equal(t, "agnx/v1alpha1", a.APIVersion)
	assert.Equal(t, "Agent", a.Kind)
	assert.Equal(t, httpapi.AgentMetadata{Name: "assistant", Description: "A friendly general-purpose assistant.", Version: "1"}, a.Metadata)
	assert.Equal(t, "ollama", a.Spec.Model.Provider)
	assert.Equal(t, "qwen3:1.7b", a.Spec.Model.Name)
	require.NotNil(t, a.Spec.Model.Temperature)
	assert.InDelta(t, 0.7, *a.Spec.Model.Temperature, 1e-9)
	soul, err := os.ReadFile(filepath.Join(e.cfg.AgentsDir, "assistant", "SOUL.md"))
	require.NoError(t, err)
	assert.Equal(t, string(soul), a.Spec.Soul, "prompt texts, not file names")
	assert.NotEmpty(t, a.Spec.Instructions)
	assert.Equal(t, []string{"builtin:read_file", "builtin:list_dir"}, a.Spec.Tools)

	// What agent.yaml does not set is left out, not filled in.
	resp = e.do("GET", "/api/v1/agents/assistant", "")
	var raw struct{ Metadata, Spec map[string]any }
	require.NoError(t, jsonDecode(resp, &raw))
	model, _ := raw.Spec["model"].(map[string]any)
	for _, k := range []string{"max_input_tokens", "max_output_tokens", "base_url"} {
		assert.NotContains(t, model, k)
	}
	assert.NotContains(t, raw.Spec, "system_prompt")
	assert.NotContains(t, raw.Metadata, "labels")

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

// An agent's base_url may carry a reverse proxy's password or a key in
// its query: GET /api/v1/agents/{name} shows where it points, never the
// secret (no API answer carries one).
func TestAgents_BaseURLSecretsHidden(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	file := filepath.Join(e.cfg.AgentsDir, "assistant", agents.FileName)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	data = []byte(strings.Replace(string(data), "    # base_url:",
		"    base_url: http://ollama:pa55-s3cret@127.0.0.1:11434/v1?key=k3y-s3cret\n    # base_url:", 1))
	require.NoError(t, os.WriteFile(file, data, 0o644))

	resp := e.do("GET", "/api/v1/agents/assistant", "")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.NotContains(t, string(body), "pa55-s3cret")
	assert.NotContains(t, string(body), "k3y-s3cret")
	var a httpapi.Agent
	require.NoError(t, json.Unmarshal(body, &a))
	assert.Equal(t, "http://xxxxx@127.0.0.1:11434/v1?key=xxxxx", a.Spec.Model.BaseURL)
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                                    "",
		"http://127.0.0.1:11434":              "http://127.0.0.1:11434",
		"https://user:pw@host/v1":             "https://xxxxx@host/v1",
		"https://tok@host/v1":                 "https://xxxxx@host/v1",
		"https://host/v1?api-key=a&api-key=b": "https://host/v1?api-key=xxxxx",
		"not a url":                           "not a url",
		"user:pw@host":                        "",
		"://tok@x":                            "",
	} {
		assert.Equal(t, want, httpapi.RedactURL(in), in)
	}
}
