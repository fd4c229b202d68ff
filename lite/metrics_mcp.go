package lite

import "github.com/agnx-lite/agnx-lite/lite/mcp"

// writeMCP writes the MCP servers' gauges and counters, by agent and
// server. The counters are the manager's: they start again when an
// agent's servers are forgotten (evicted), which Prometheus reads as a
// counter reset. Nothing is written before the first MCP server is known.
func writeMCP(p *promWriter, stats []mcp.Stat) {
	if len(stats) == 0 {
		return
	}
	families := []struct {
		name, typ, help string
		v               func(mcp.Stat) float64
	}{
		{"agnx_mcp_server_running", "gauge", "1 while the MCP server's process or HTTP session is up.", func(s mcp.Stat) float64 {
			if s.Running {
				return 1
			}
			return 0
		}},
		{"agnx_mcp_server_rss_bytes", "gauge", "Resident memory of a stdio MCP server's processes (not agnx-lite's own).",
			func(s mcp.Stat) float64 { return float64(s.RSS) }},
		{"agnx_mcp_calls_total", "counter", "MCP tool calls.", func(s mcp.Stat) float64 { return float64(s.Calls) }},
		{"agnx_mcp_failures_total", "counter", "MCP tool calls that failed for the server's sake (it died, hung or answered garbage).",
			func(s mcp.Stat) float64 { return float64(s.Failures) }},
		{"agnx_mcp_restarts_total", "counter", "MCP server starts after the first.", func(s mcp.Stat) float64 { return float64(s.Restarts) }},
	}
	for _, f := range families {
		p.family(f.name, f.typ, f.help)
		for _, s := range stats {
			p.sample(f.name, f.v(s), "agent", s.Agent, "server", s.Server)
		}
	}
}
