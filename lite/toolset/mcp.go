package toolset

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/mcp"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// MCP is the host side of the MCP client: the entries of agnx.yaml, the
// manager (made on the first agent with a server, so an agent without
// one costs nothing), the store its tool lists are cached in.
type MCP struct {
	cfg       *config.Config
	log       *slog.Logger
	sandboxes *sandbox.Manager
	transport *mcpTransport
	cache     mcp.Cache  // nil: no tool-list cache
	agents    AgentCache // nil: nobody to tell

	mu sync.Mutex
	m  *mcp.Manager
}

// MCPOptions are what an MCP host uses.
type MCPOptions struct {
	Config    *config.Config
	Logger    *slog.Logger
	Sandboxes *sandbox.Manager // where stdio servers run; not closed by the host
	// Cache keeps the servers' tool lists (the loop's KV in the daemon);
	// nil outside a daemon: every list is asked of its server.
	Cache mcp.Cache
	// Agents is told when a server changed its tool list; nil: nobody.
	Agents AgentCache
}

// NewMCP makes an MCP host; it starts nothing.
func NewMCP(o MCPOptions) *MCP {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &MCP{cfg: o.Config, log: log, sandboxes: o.Sandboxes, transport: newMCPTransport(), cache: o.Cache, agents: o.Agents}
	for _, s := range o.Config.MCP.Servers {
		if s.URL != "" {
			h.transport.allow(s.URL) // the operator's
		}
	}
	return h
}

// Manager returns the manager, made on first use.
func (h *MCP) Manager() *mcp.Manager {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		offered := environ(h.cfg.Sandbox.Env, os.LookupEnv)
		h.m = mcp.NewManager(mcp.Options{
			Spawn:       h.sandboxes.SpawnMCP,
			Cache:       h.cache,
			Changed:     h.changed,
			IdleTimeout: config.Seconds(h.cfg.MCP.IdleTimeoutSeconds, 0),
			CallTimeout: config.Seconds(h.cfg.MCP.CallTimeoutSeconds, 0),
			Log:         h.log,
			// An agent's entries were checked to name only what
			// sandbox.env offers (checkEnvRefs); global ones may name
			// the daemon's whole environment.
			Env: func(k string) string {
				if v, ok := offered[k]; ok {
					return v
				}
				return os.Getenv(k)
			},
			HTTPClient: h.transport.client(),
		})
	}
	return h.m
}

// Started returns the manager if one was made, else nil.
func (h *MCP) Started() *mcp.Manager {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m
}

// Stats are the servers' stats; none when no manager was made.
func (h *MCP) Stats() []mcp.Stat {
	if m := h.Started(); m != nil {
		return m.Stats()
	}
	return nil
}

// Forget stops the servers of an evicted agent.
func (h *MCP) Forget(agent string) {
	if m := h.Started(); m != nil {
		m.Forget(agent)
	}
}

// Close stops every server, waiting at most 10 s.
func (h *MCP) Close() {
	m := h.Started()
	if m == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		h.log.Warn("MCP servers did not all stop", "err", err)
	}
	h.transport.closeIdle()
}

// Servers turns an agent's MCP entries (its own and agnx.yaml's) into
// what the manager runs; an entry that is not acceptable is an error that
// refuses the agent, as a bad cli tool does.
func (h *MCP) Servers(a *agents.Agent) ([]mcp.Server, error) {
	refs, own := MCPEntries(h.cfg, a)
	out := make([]mcp.Server, 0, len(refs))
	for i, ref := range refs {
		s, err := MCPServer(h.cfg, a, ref, own[i])
		if err != nil {
			return nil, err
		}
		if own[i] && ref.URL != "" && ref.AllowPrivate {
			h.transport.allow(ref.URL)
		}
		out = append(out, s)
	}
	return out, nil
}

// tools returns the tools of the agent's MCP servers: from the cache
// when their entries did not change, else by starting each server once.
// A server that cannot be listed gives a warning on the agent and no
// tools; the agent still loads.
func (h *MCP) tools(a *agents.Agent) ([]runtime.Tool, error) {
	servers, err := h.Servers(a)
	if err != nil || len(servers) == 0 {
		return nil, err
	}
	// The manager bounds each server by its call timeout; this is a
	// backstop for the build as a whole.
	limit := config.Seconds(h.cfg.MCP.CallTimeoutSeconds, mcp.DefaultCallTimeout)
	for _, s := range servers {
		limit = max(limit, s.CallTimeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit+5*time.Second)
	defer cancel()
	ts, warns := h.Manager().Tools(ctx, a.Name, a.Workspace, servers)
	for _, w := range warns {
		h.log.Warn(w, "agent", a.Name)
	}
	a.Warnings = append(a.Warnings, warns...)
	return ts, nil
}

// changed tells the agent cache that a server changed the agent's tool
// list (the manager calls it on its own goroutines).
func (h *MCP) changed(agent string) {
	if h.agents != nil {
		h.agents.MarkStale(agent)
	}
}
