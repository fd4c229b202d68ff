package lite

import (
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/lite/mcp"
)

// MCPServers reports the MCP servers the daemon knows (started or listed
// since it started), for serve status.
func (a *App) MCPServers() []httpapi.MCPServer {
	return mcpStatus(a.Agents.Tools().MCP().Stats())
}

// MCPStats are the MCP servers' raw stats.
func (a *App) MCPStats() []mcp.Stat { return a.Agents.Tools().MCP().Stats() }

// RSS is the daemon's own resident memory in bytes (0 when unknown); its
// MCP servers are other processes and not counted.
func (a *App) RSS() int64 {
	m, err := a.host.Self()
	if err != nil {
		return 0
	}
	return m.RSS
}

func mcpStatus(stats []mcp.Stat) []httpapi.MCPServer {
	out := make([]httpapi.MCPServer, 0, len(stats))
	for _, s := range stats {
		state := "stopped"
		if s.Running {
			state = "running"
		}
		out = append(out, httpapi.MCPServer{Agent: s.Agent, Server: s.Server, State: state, PID: s.PID, RSSBytes: s.RSS,
			Tools: s.Tools, Calls: s.Calls, Failures: s.Failures, Restarts: s.Restarts, LastError: s.LastError})
	}
	return out
}
