package httpapi

import (
	"fmt"
	"net/http"
	"os"
	goruntime "runtime"
	"strings"
	"time"
)

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
	if s.o.RSS != nil {
		res["rss_bytes"] = s.o.RSS()
	}
	if s.o.Schedules != nil {
		active, next := s.o.Schedules.Stats()
		res["schedules_active"] = active
		if !next.IsZero() {
			res["schedules_next"] = next.UTC()
		}
	}
	if s.o.MCPServers != nil {
		if m := s.o.MCPServers(); len(m) > 0 {
			res["mcp_servers"] = m
		}
	}
	writeJSON(w, http.StatusOK, res)
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
