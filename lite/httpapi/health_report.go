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
	// opening its database again: Ollama, memory, disk, load,
	// temperature, throttling, sandbox, schedules.
	Checks []HealthCheck
	// Host is the machine's facts; nil leaves them out of the report.
	Host *HostFacts
}

// HostFacts is the report's host object: what the owner of a small board
// looks at. A fact the machine does not give, or that could not be read,
// is left out.
type HostFacts struct {
	Memory *HostMemory `json:"memory,omitempty"`
	// Disk is the filesystem holding the data dir.
	Disk *HostDisk `json:"disk,omitempty"`
	Load *HostLoad `json:"load,omitempty"`
	// CPUTemperature is the hottest sensor's reading, °C.
	CPUTemperature *float64 `json:"cpu_temperature_celsius,omitempty"`
	// Throttled is a Raspberry Pi firmware's throttling.
	Throttled *HostThrottled `json:"throttled,omitempty"`
}

// HostMemory is the machine's memory; available counts the cache the
// kernel can reclaim (MemAvailable).
type HostMemory struct {
	TotalBytes     int64 `json:"total_bytes"`
	AvailableBytes int64 `json:"available_bytes"`
}

// HostDisk is a filesystem's size and what may still be written to it.
type HostDisk struct {
	TotalBytes int64 `json:"total_bytes"`
	FreeBytes  int64 `json:"free_bytes"`
}

// HostLoad is the load average over 1, 5 and 15 minutes.
type HostLoad struct {
	Load1  float64 `json:"load1"`
	Load5  float64 `json:"load5"`
	Load15 float64 `json:"load15"`
}

// HostThrottled names the conditions that hold now and those that held
// since boot: under_voltage, frequency_capped, throttled,
// soft_temperature_limit.
type HostThrottled struct {
	Now       []string `json:"now"`
	SinceBoot []string `json:"since_boot"`
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
	Host          *HostFacts    `json:"host,omitempty"`
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
		rep.Host = f.Host
	}
	writeJSON(w, http.StatusOK, rep)
}
