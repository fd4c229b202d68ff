package doctor

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/mcp"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// MCPProbe reaches one agent's MCP servers outside the daemon, as the
// daemon would (same sandbox, same entries), for `agnx-lite mcp list` and
// `mcp test`. Close stops what it started.
type MCPProbe struct {
	agent   *agents.Agent
	host    *toolset.MCP
	servers []mcp.Server
	// sandboxes run its stdio servers; Close closes them.
	sandboxes *sandbox.Manager
	store     *storage.Store // the tool-list cache, read-only; nil when unusable
}

// OpenMCPProbe reaches the MCP servers of agent a (loaded from its
// folder; the caller says when there is none). With cached, the tool
// lists the daemon cached are used when their entries did not change (the
// database is opened read-only; when the daemon holds it, servers are
// connected to instead).
func OpenMCPProbe(cfg *config.Config, a *agents.Agent, cached bool, log *slog.Logger) (*MCPProbe, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a.Workspace = cfg.WorkspaceDir(a.Name)
	if err := os.MkdirAll(a.Workspace, 0o700); err != nil {
		return nil, fmt.Errorf("create workspace of agent %s: %w", a.Name, err)
	}
	// Outside a daemon: no database, so no disk reserve to watch.
	sandboxes := sandbox.New(sandbox.Options{Config: cfg.Sandbox, DataDir: cfg.DataDir, Logger: log})
	p := &MCPProbe{agent: a, sandboxes: sandboxes}
	// The tool-list cache first: the host is made with it.
	var cache mcp.Cache
	if cached && config.ReadDaemon(cfg) == nil {
		if st, err := storage.Open(cfg.DBPath(), &storage.Options{ReadOnly: true}); err == nil {
			p.store, cache = st, storeKV{st}
		}
	}
	p.host = toolset.NewMCP(toolset.MCPOptions{Config: cfg, Logger: log, Sandboxes: p.sandboxes, Cache: cache})
	servers, err := p.host.Servers(a)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.servers = servers
	return p, nil
}

// Servers are the agent's server entries, agnx.yaml's first.
func (p *MCPProbe) Servers() []mcp.Server { return p.servers }

// Tools lists one server's tools: from the cache when allowed and the
// entry did not change, else by starting the server. The warnings say
// why a server gave none.
func (p *MCPProbe) Tools(ctx context.Context, server string) ([]runtime.Tool, []string, error) {
	for _, s := range p.servers {
		if s.Name == server {
			ts, warns := p.host.Manager().Tools(ctx, p.agent.Name, p.agent.Workspace, []mcp.Server{s})
			return ts, warns, nil
		}
	}
	names := make([]string, 0, len(p.servers))
	for _, s := range p.servers {
		names = append(names, s.Name)
	}
	return nil, nil, fmt.Errorf("agent %s has no MCP server %q (it has: %v)", p.agent.Name, server, names)
}

// Stats are the servers' stats so far.
func (p *MCPProbe) Stats() []mcp.Stat { return p.host.Stats() }

// Close stops every server the probe started and releases the sandbox.
func (p *MCPProbe) Close() {
	p.host.Close()
	p.sandboxes.Close()
	if p.store != nil {
		p.store.Close()
	}
}

// storeKV reads the daemon's cached tool lists from a store opened
// read-only; writes are dropped (the daemon keeps the cache).
type storeKV struct{ st *storage.Store }

func (k storeKV) Get(_ context.Context, key string) ([]byte, error) {
	return runtime.ReadKV(k.st, toolset.MCPCacheKey(key))
}

func (storeKV) Put(context.Context, string, []byte) error { return nil }

var _ mcp.Cache = storeKV{}
