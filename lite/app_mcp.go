package lite

import (
	"context"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/lite/mcp"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"github.com/agnx-lite/agnx-lite/runtime"
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

// loopKV is the loop's KV as the MCP manager's tool-list cache, under
// the keys toolset.MCPCacheKey names.
type loopKV struct{ l *runtime.Loop }

func (k loopKV) Get(ctx context.Context, key string) ([]byte, error) {
	return k.l.KV(ctx, toolset.MCPCacheKey(key))
}

func (k loopKV) Put(ctx context.Context, key string, val []byte) error {
	return k.l.PutKV(ctx, toolset.MCPCacheKey(key), val)
}

var _ mcp.Cache = loopKV{}
