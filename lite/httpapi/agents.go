package httpapi

import (
	"errors"
	"io/fs"
	"net/http"

	"github.com/agnx-lite/agnx-lite/agents"
)

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	list, err := s.o.Agents.List()
	if err != nil {
		writeProblem(w, r, http.StatusInternalServerError, codeInternal, err.Error())
		return
	}
	if list == nil {
		list = []AgentInfo{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": list})
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
	writeJSON(w, http.StatusOK, agentJSON(a))
}

func agentJSON(a *agents.Agent) map[string]any {
	tools := []string{}
	for _, t := range a.Tools {
		tools = append(tools, t.Type+":"+t.Name)
	}
	return map[string]any{
		"name": a.Name, "description": a.Description, "version": a.Version,
		"model": map[string]any{
			"provider": a.Model.Provider, "name": a.Model.Name, "temperature": a.Model.Temperature,
			"base_url": a.Model.BaseURL, "max_input_tokens": a.Model.MaxInputTokens,
			"max_output_tokens": a.Model.MaxOutputTokens,
		},
		"session": map[string]any{
			"on_disconnect": a.Session.OnDisconnect, "max_tool_iterations": a.Session.MaxToolIterations,
			"llm_timeout_seconds": a.Session.LLMTimeoutSeconds,
		},
		"tools": tools,
	}
}
