package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
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
	if s.authorize(api, r) != "" {
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
	writeJSON(w, http.StatusOK, map[string]any{
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
	})
}

// shutdown starts a graceful shutdown, once: 200 text "Shutdown
// initiated", then 409, as Agnx answers.
func (s *Server) shutdown(w http.ResponseWriter, r *http.Request) {
	if !s.shuttingDown.CompareAndSwap(false, true) {
		writeText(w, http.StatusConflict, "Shutdown already in progress")
		return
	}
	writeText(w, http.StatusOK, "Shutdown initiated")
	if s.o.Shutdown != nil {
		go s.o.Shutdown()
	}
}

// reloadAgents answers text "Reloaded N agents" (N: those that loaded), as
// Agnx does; a client that asks for JSON (Accept: application/json) gets
// the report of each agent instead, with the error of an invalid one.
func (s *Server) reloadAgents(w http.ResponseWriter, r *http.Request) {
	list := s.o.Agents.Reload()
	if list == nil {
		list = []AgentInfo{}
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"agents": list})
		return
	}
	n := 0
	for _, a := range list {
		if a.Err == "" {
			n++
		}
	}
	writeText(w, http.StatusOK, fmt.Sprintf("Reloaded %d agents", n))
}

// wantsJSON reports whether r's Accept names application/json itself
// (not only through */*).
func wantsJSON(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := strings.Cut(part, ";")
		if strings.EqualFold(strings.TrimSpace(mt), "application/json") {
			return true
		}
	}
	return false
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
