package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"slices"
)

// livez answers text "ok", as Agnx does.
func (s *Server) livez(w http.ResponseWriter, r *http.Request) {
	writeText(w, http.StatusOK, "ok")
}

func writeText(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}

// WorkspaceHash is the hex SHA-256 of dir's canonical path (absolute, with
// symbolic links resolved), as Agnx's /readyz reports its workspace; "" for
// no dir. A dir that cannot be resolved is hashed as its absolute path.
func WorkspaceHash(dir string) string {
	if dir == "" {
		return ""
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	sum := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(sum[:])
}

// buildInfo returns the VCS revision and time the binary was built from,
// or "unknown".
func buildInfo() (commit, date string) {
	commit, date = "unknown", "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			commit = kv.Value
		case "vcs.time":
			date = kv.Value
		}
	}
	return
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
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "workspace_hash": s.workspaceHash})
}

func isClosed[T any](c <-chan T) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// variant is what /version reports as Agnx's build variant: "core", as
// lite is one build without Agnx's optional "full" feature set, whose
// clients must not expect it.
const variant = "core"

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{
		"version": s.o.Version, "commit": s.o.Commit, "build_date": s.o.BuildDate, "variant": variant,
		"go": goruntime.Version(), "os": goruntime.GOOS, "arch": goruntime.GOARCH,
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
	if hint, _ := s.authorize(api, r); hint != "" {
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

// metrics serves the Prometheus text exposition: the daemon's, then the
// server's own refusal counters (refusals.go).
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	if s.o.Metrics == nil {
		writeProblem(w, r, http.StatusNotFound, codeNotFound, "metrics are not enabled on this server")
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.o.Metrics(w)
	s.refused.write(w, s.throttle.size())
}
