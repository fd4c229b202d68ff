package lite

import (
	"context"
	"errors"
	"fmt"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/mcp"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
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

// OpenMCPProbe loads the agent and its MCP entries. With cached, the tool
// lists the daemon cached are used when their entries did not change (the
// database is opened read-only; when the daemon holds it, servers are
// connected to instead).
func OpenMCPProbe(cfg *config.Config, name string, cached bool, log *slog.Logger) (*MCPProbe, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := filepath.Join(cfg.AgentsDir, name)
	if _, err := os.Stat(filepath.Join(dir, agents.FileName)); !agents.ValidName(name) || errors.Is(err, fs.ErrNotExist) {
		return nil, &agentcache.AgentNotFoundError{Name: name, Dir: cfg.AgentsDir}
	}
	a, err := agents.Load(dir)
	if err != nil {
		return nil, err
	}
	a.Workspace = cfg.WorkspaceDir(a.Name)
	if err := os.MkdirAll(a.Workspace, 0o700); err != nil {
		return nil, fmt.Errorf("create workspace of agent %s: %w", name, err)
	}
	p := &MCPProbe{agent: a, sandboxes: agentcache.StandaloneTools(cfg, log).Sandboxes}
	// The tool-list cache first: the host is made with it.
	var cache mcp.Cache
	if cached && config.ReadDaemon(cfg) == nil {
		if st, err := storage.Open(cfg.DBPath(), &storage.Options{ReadOnly: true}); err == nil {
			p.store, cache = st, storeKV{st}
		}
	}
	p.host = toolset.NewMCP(toolset.MCPOptions{Config: cfg, Logger: log, Sandboxes: p.sandboxes, Cache: cache})
	if p.servers, err = p.host.Servers(a); err != nil {
		p.Close()
		return nil, err
	}
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
	return runtime.ReadKV(k.st, loopKV{}.key(key))
}

func (storeKV) Put(context.Context, string, []byte) error { return nil }

// loopKV is the loop's KV as the MCP manager's tool-list cache, under
// mcp/.
type loopKV struct{ l *runtime.Loop }

func (k loopKV) key(s string) string { return "mcp/" + strings.TrimPrefix(s, "mcp.") }

func (k loopKV) Get(ctx context.Context, key string) ([]byte, error) { return k.l.KV(ctx, k.key(key)) }

func (k loopKV) Put(ctx context.Context, key string, val []byte) error {
	return k.l.PutKV(ctx, k.key(key), val)
}

var _ mcp.Cache = loopKV{}
