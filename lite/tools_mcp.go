package lite

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/mcp"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// mcpHost is lite's side of the MCP client: the entries of agnx.yaml, the
// manager (made on the first agent with a server, so an agent without
// one costs nothing), the store its tool lists are cached in.
type mcpHost struct {
	cfg       *config.Config
	log       *slog.Logger
	sandboxes *sandbox.Manager
	transport *mcpTransport

	// cache and changed are set by Open before anything builds: the
	// loop's KV and the agent cache's markStale. Outside a daemon cache
	// is nil (no cache) and changed does nothing.
	cache   mcp.Cache
	changed func(agent string)

	mu sync.Mutex
	m  *mcp.Manager
}

func newMCPHost(cfg *config.Config, log *slog.Logger, sb *sandbox.Manager) *mcpHost {
	h := &mcpHost{cfg: cfg, log: log, sandboxes: sb, transport: newMCPTransport(), changed: func(string) {}}
	for _, s := range cfg.MCP.Servers {
		if s.URL != "" {
			h.transport.allow(s.URL) // the operator's
		}
	}
	return h
}

// manager returns the manager, made on first use.
func (h *mcpHost) manager() *mcp.Manager {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		offered := environ(h.cfg.Sandbox.Env, os.LookupEnv)
		h.m = mcp.NewManager(mcp.Options{
			Spawn:       h.sandboxes.SpawnMCP,
			Cache:       h.cache,
			Changed:     func(agent string) { h.changed(agent) },
			IdleTimeout: seconds(h.cfg.MCP.IdleTimeoutSeconds, 0),
			CallTimeout: seconds(h.cfg.MCP.CallTimeoutSeconds, 0),
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

// started returns the manager if one was made, else nil.
func (h *mcpHost) started() *mcp.Manager {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m
}

// stats are the servers' stats; none when no manager was made.
func (h *mcpHost) stats() []mcp.Stat {
	if m := h.started(); m != nil {
		return m.Stats()
	}
	return nil
}

// forget stops the servers of an evicted agent.
func (h *mcpHost) forget(agent string) {
	if m := h.started(); m != nil {
		m.Forget(agent)
	}
}

// close stops every server, waiting at most 10 s.
func (h *mcpHost) close() {
	m := h.started()
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

// servers turns an agent's MCP entries (its own and agnx.yaml's) into
// what the manager runs; an entry that is not acceptable is an error that
// refuses the agent, as a bad cli tool does.
func (h *mcpHost) servers(a *agents.Agent) ([]mcp.Server, error) {
	refs, own := mcpEntries(h.cfg, a)
	out := make([]mcp.Server, 0, len(refs))
	for i, ref := range refs {
		s, err := mcpServer(h.cfg, a, ref, own[i])
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
func (h *mcpHost) tools(a *agents.Agent) ([]runtime.Tool, error) {
	servers, err := h.servers(a)
	if err != nil || len(servers) == 0 {
		return nil, err
	}
	// The manager bounds each server by its call timeout; this is a
	// backstop for the build as a whole.
	limit := seconds(h.cfg.MCP.CallTimeoutSeconds, mcp.DefaultCallTimeout)
	for _, s := range servers {
		limit = max(limit, s.CallTimeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit+5*time.Second)
	defer cancel()
	ts, warns := h.manager().Tools(ctx, a.Name, a.Workspace, servers)
	for _, w := range warns {
		h.log.Warn(w, "agent", a.Name)
	}
	a.Warnings = append(a.Warnings, warns...)
	return ts, nil
}

// loopKV is the loop's KV as the manager's tool-list cache, under mcp/.
type loopKV struct{ l *runtime.Loop }

func (k loopKV) key(s string) string { return "mcp/" + strings.TrimPrefix(s, "mcp.") }

func (k loopKV) Get(ctx context.Context, key string) ([]byte, error) { return k.l.KV(ctx, k.key(key)) }

func (k loopKV) Put(ctx context.Context, key string, val []byte) error {
	return k.l.PutKV(ctx, k.key(key), val)
}

var _ mcp.Cache = loopKV{}
