package httpapi

import (
	"net/http"
	"time"
)

// HealthFacts is what the daemon tells GET /api/v1/health beyond what the
// server knows itself (version, uptime, RSS, the agents defined).
type HealthFacts struct {
	// AgentsLoaded is how many agents are loaded now.
	AgentsLoaded int
	// Checks are doctor's checks that a running daemon can make without
	// opening its database again: Ollama, temperature, memory, sandbox,
	// schedules.
	Checks []HealthCheck
}

// HealthCheck is one check, as `agnx-lite doctor` prints it.
type HealthCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok | warn | fail
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// healthReport is the body of GET /api/v1/health.
type healthReport struct {
	Version       string        `json:"version"`
	UptimeSeconds int64         `json:"uptime_seconds"`
	RSSBytes      int64         `json:"rss_bytes"`
	AgentsLoaded  int           `json:"agents_loaded"`
	AgentsDefined int           `json:"agents_defined"`
	Checks        []HealthCheck `json:"checks"`
}

// health serves GET /api/v1/health, for the web UI's dashboard. The
// checks come from Options.Health, which bounds and caches its probes.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	rep := healthReport{Version: s.o.Version, UptimeSeconds: int64(time.Since(s.started) / time.Second), Checks: []HealthCheck{}}
	if s.o.RSS != nil {
		rep.RSSBytes = s.o.RSS()
	}
	if list, err := s.o.Agents.List(); err == nil {
		rep.AgentsDefined = len(list) // the invalid ones too: each is a folder to fix
	}
	if s.o.Health != nil {
		f := s.o.Health(r.Context())
		rep.AgentsLoaded = f.AgentsLoaded
		if f.Checks != nil {
			rep.Checks = f.Checks
		}
	}
	writeJSON(w, http.StatusOK, rep)
}
