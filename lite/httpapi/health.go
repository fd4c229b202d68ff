package httpapi

import (
	"net/http"
	"os"
	goruntime "runtime"
	"slices"
	"time"
)

func (s *Server) livez(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz is ready only while the loop runs over an open database.
// A stopped loop's Ready is closed too, and select picks among ready cases
// at random: so each state is asked in turn, most final first.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	msg := ""
	switch {
	case isClosed(s.o.Loop.Done()):
		msg = "the runtime has stopped"
	case isClosed(s.closing):
		msg = "the server is shutting down"
	case !isClosed(s.o.Loop.Ready()):
		msg = "the runtime is still starting"
	}
	if msg != "" {
		writeProblem(w, r, http.StatusServiceUnavailable, codeUnavailable, msg)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func isClosed[T any](c <-chan T) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{
		"version": s.o.Version, "go": goruntime.Version(), "os": goruntime.GOOS, "arch": goruntime.GOARCH,
	})
}

// agentCard is the A2A agent card: the server as one agent whose skills
// are the agents it hosts. The route is public, as A2A discovery wants,
// but the agents are not: a caller the API would refuse sees only
// server.public_agents.
func (s *Server) agentCard(w http.ResponseWriter, r *http.Request) {
	list, err := s.o.Agents.List()
	if err != nil {
		writeProblem(w, r, http.StatusInternalServerError, codeInternal, err.Error())
		return
	}
	if code, _ := s.authorize(api, r); code != 0 {
		list = slices.DeleteFunc(list, func(a AgentInfo) bool { return !slices.Contains(s.o.PublicAgents, a.Name) })
	}
	type skill struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
	}
	skills := []skill{}
	for _, a := range list {
		if a.Err != "" {
			continue
		}
		desc := a.Description
		if desc == "" {
			desc = "agent " + a.Name
		}
		skills = append(skills, skill{ID: a.Name, Name: a.Name, Description: desc, Tags: []string{a.Provider}})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"protocolVersion":    "0.3.0",
		"name":               "agnx-lite",
		"description":        "A personal AI-agent runtime for small hardware.",
		"url":                s.o.BaseURL + "/api/v1",
		"preferredTransport": "HTTP+JSON",
		"version":            s.o.Version,
		"capabilities":       map[string]bool{"streaming": true, "pushNotifications": false},
		"defaultInputModes":  []string{"text/plain"},
		"defaultOutputModes": []string{"text/plain"},
		"skills":             skills,
	})
}

// status is what `agnx-lite serve status` prints.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	st, err := s.o.Loop.Stats(r.Context())
	if err != nil {
		writeProblem(w, r, http.StatusServiceUnavailable, codeUnavailable, err.Error())
		return
	}
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	res := map[string]any{
		"pid":               os.Getpid(),
		"version":           s.o.Version,
		"address":           s.o.BaseURL,
		"uptime_seconds":    int64(time.Since(s.started).Seconds()),
		"sessions_resident": st.Resident,
		"turns_running":     st.Running,
		"turns_waiting":     st.Waiting,
		"inbox":             st.Inbox,
		"goroutines":        goruntime.NumGoroutine(),
		"heap_bytes":        ms.HeapInuse,
	}
	if s.o.Gateways != nil {
		if g := s.o.Gateways(); len(g) > 0 {
			res["gateways"] = g
		}
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) shutdown(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "shutting down"})
	if s.o.Shutdown != nil {
		go s.o.Shutdown()
	}
}

func (s *Server) reloadAgents(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"agents": s.o.Agents.Reload()})
}

// metrics serves the Prometheus text exposition.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	if s.o.Metrics == nil {
		writeProblem(w, r, http.StatusNotFound, codeNotFound, "metrics are not enabled on this server")
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.o.Metrics(w)
}
