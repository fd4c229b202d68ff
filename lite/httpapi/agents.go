package httpapi

import (
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
)

// agentSummary is an agent in GET /api/v1/agents, as Agnx lists it.
type agentSummary struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
}

// invalidAgent is an agent whose files are invalid: Agnx does not list
// it; lite adds it under "invalid" (an extension), so that a user sees it.
type invalidAgent struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}

// listAgents answers {agents: [...]} with the agents that load, and
// {invalid: [...]} with those that do not.
func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	list, err := s.o.Agents.List()
	if err != nil {
		writeProblem(w, r, http.StatusInternalServerError, codeInternal, err.Error())
		return
	}
	ok, bad := []agentSummary{}, []invalidAgent{}
	for _, a := range list {
		if a.Err != "" {
			bad = append(bad, invalidAgent{Name: a.Name, Error: a.Err})
			continue
		}
		ok = append(ok, agentSummary{Name: a.Name, Description: a.Description, Version: a.Version})
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": ok, "invalid": bad})
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	a, err := s.o.Agents.Get(name)
	if err != nil {
		var ae *agents.Error
		switch {
		case errors.Is(err, fs.ErrNotExist):
			writeProblem(w, r, http.StatusNotFound, codeAgentNotFound, "no agent "+name)
		case errors.As(err, &ae):
			writeProblem(w, r, http.StatusUnprocessableEntity, codeAgentInvalid, err.Error())
		default:
			writeProblem(w, r, http.StatusNotFound, codeAgentNotFound, err.Error())
		}
		return
	}
	writeJSON(w, http.StatusOK, toAgentDetail(a))
}

// agentDetail is GET /api/v1/agents/{name}: Agnx's shape, with what
// agent.yaml set and nothing else (no defaults filled in), and the prompt
// texts. Soul and Tools are lite extensions. A base_url's credentials are
// hidden (RedactURL): no answer carries a secret.
type agentDetail struct {
	APIVersion string        `json:"api_version"`
	Kind       string        `json:"kind"`
	Metadata   agentMetadata `json:"metadata"`
	Spec       agentSpec     `json:"spec"`
}

type agentMetadata struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Version     string            `json:"version,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
}

type agentSpec struct {
	Model        agentModel `json:"model"`
	SystemPrompt string     `json:"system_prompt,omitempty"`
	Instructions string     `json:"instructions,omitempty"`
	Soul         string     `json:"soul,omitempty"`
	Tools        []string   `json:"tools"`
}

type agentModel struct {
	Provider        string   `json:"provider"`
	Name            string   `json:"name"`
	Temperature     *float64 `json:"temperature,omitempty"`
	MaxInputTokens  int      `json:"max_input_tokens,omitempty"`
	MaxOutputTokens int      `json:"max_output_tokens,omitempty"`
	BaseURL         string   `json:"base_url,omitempty"`
}

// agentKind is the kind of every agent.yaml.
const agentKind = "Agent"

func toAgentDetail(a *agents.Agent) agentDetail {
	tools := []string{}
	for _, t := range a.Tools {
		tools = append(tools, t.Type+":"+t.Name)
	}
	return agentDetail{
		APIVersion: a.APIVersion, Kind: agentKind,
		Metadata: agentMetadata{Name: a.Name, Description: a.Description, Version: a.Version, Labels: a.Labels},
		Spec: agentSpec{
			Model: agentModel{Provider: a.Model.Provider, Name: a.Model.Name, Temperature: a.Model.Temperature,
				MaxInputTokens: a.Model.MaxInputTokens, MaxOutputTokens: a.Model.MaxOutputTokens, BaseURL: RedactURL(a.Model.BaseURL)},
			SystemPrompt: a.SystemPrompt, Instructions: a.Instructions, Soul: a.Soul, Tools: tools,
		},
	}
}

// RedactURL returns u with what may be a secret in it hidden: the user
// and password, and the values of the query (some servers take their key
// as ?key=). API answers and health checks show URLs through it; a string
// that does not parse as a URL with a host is returned as "" when it has
// an @ (it may hold credentials), else unchanged.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		if strings.Contains(u, "@") {
			return ""
		}
		return u
	}
	if p.User != nil {
		p.User = url.User("xxxxx")
	}
	if p.RawQuery != "" {
		q := p.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		p.RawQuery = q.Encode()
	}
	return p.String()
}
