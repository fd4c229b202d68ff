package mcp

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// Options configure a Manager; zero values are defaults.
type Options struct {
	// Spawn starts a stdio server's process (in the daemon: in the agent's
	// bubblewrap sandbox, cwd the agent's workspace, env only s.Env
	// expanded, network only if s.Network, s.ReadOnly bound read-only).
	// nil: stdio servers cannot start.
	Spawn func(ctx context.Context, workspace string, s Server) (*bwrap.Process, error)
	// Cache keeps each server's tool list across restarts (lite: the
	// loop's KV in bbolt); nil: none.
	Cache Cache
	// Changed is called, on a goroutine of its own, when a server's tool
	// list changed (tools/list_changed, or a relist found a difference):
	// lite rebuilds that agent on its next turn.
	Changed func(agent string)
	// IdleTimeout stops a server no call used for that long; default 5
	// min; Server.IdleTimeout overrides.
	IdleTimeout time.Duration
	// CallTimeout bounds one tool call, and a server's start; default 60
	// s; Server.CallTimeout overrides.
	CallTimeout time.Duration
	Log         *slog.Logger
	// Env is the daemon's environment for ${env:NAME}; default os.Getenv.
	Env func(string) string
	// HTTPClient is for http and sse servers (lite gives one with its
	// SSRF dial guard); default http.DefaultClient.
	HTTPClient *http.Client
}

// Cache keeps tool lists by key.
type Cache interface {
	// Get returns nil, nil when key is absent.
	Get(ctx context.Context, key string) ([]byte, error)
	// Put stores val under key; a nil val deletes.
	Put(ctx context.Context, key string, val []byte) error
}

// Defaults of Options.
const (
	DefaultIdleTimeout = 5 * time.Minute
	DefaultCallTimeout = 60 * time.Second
)

// Backoff of a server that died or could not start: 1 s, doubling, at
// most 60 s.
const (
	backoffBase = time.Second
	backoffMax  = time.Minute
)

// Manager owns the MCP servers of every agent: one client per (agent,
// server entry), started on first use, stopped when idle, restarted with
// backoff when it dies. Its methods are safe for concurrent use; no lock
// is held across a server's I/O, so one slow server never holds up
// another, or the loop.
type Manager struct {
	o           Options
	backoffBase time.Duration // tests shorten it
	// dial, in tests, connects every server through the transport it
	// returns instead of Spawn or HTTP.
	dial func(ctx context.Context, s Server) (sdk.Transport, error)
	// stopped, in tests, is told when a server's session has ended.
	stopped func(agent, server string)

	// procs reads the servers' process trees for their memory.
	procs hostfacts.Reader

	mu      sync.Mutex
	servers map[serverKey]*server
	closed  bool
}

type serverKey struct{ agent, name string }

// NewManager returns a Manager; it starts nothing.
func NewManager(o Options) *Manager {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Env == nil {
		o.Env = os.Getenv
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	return &Manager{o: o, backoffBase: backoffBase, servers: map[serverKey]*server{}}
}

// errClosed is what a call gets once Close ran.
var errClosed = errors.New("the MCP manager is closed (the daemon is stopping)")

// Tools returns the tools of the agent's servers: from the cache when
// the entry is unchanged (no server started), else by starting the
// server once and listing (it then stays up until idle). A server that
// cannot be listed gives a warning sentence and no tools; no server
// holds this past its call timeout, and servers are listed in parallel.
func (m *Manager) Tools(ctx context.Context, agent, workspace string, servers []Server) ([]runtime.Tool, []string) {
	type out struct {
		tools []runtime.Tool
		warns []string
	}
	outs := make([]out, len(servers))
	var wg sync.WaitGroup
	names := newNamer()
	seen := map[string]bool{}
	for i, srv := range servers {
		if seen[srv.Name] {
			outs[i].warns = []string{"MCP server " + quote(srv.Name) + " is declared twice: the second entry is ignored; rename one of them"}
			continue
		}
		seen[srv.Name] = true
		s, err := m.server(agent, workspace, srv)
		if err != nil {
			outs[i].warns = []string{err.Error()}
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, s.callTimeout())
			defer cancel()
			l, warns := s.tools(ctx)
			outs[i] = out{warns: warns}
			if l != nil {
				outs[i].tools = s.runtimeTools(l, nil)
			}
		})
	}
	wg.Wait()
	var tools []runtime.Tool
	var warns []string
	for _, o := range outs {
		tools = append(tools, names.assign(o.tools)...)
		warns = append(warns, o.warns...)
	}
	return tools, warns
}

// server returns the client of one entry, replacing one whose entry
// changed (the old one stops once its calls are done).
func (m *Manager) server(agent, workspace string, srv Server) (*server, error) {
	if err := validate(srv); err != nil {
		return nil, err
	}
	key := cacheKey(agent, workspace, srv, m.o.Env)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errClosed
	}
	k := serverKey{agent, srv.Name}
	if s := m.servers[k]; s != nil {
		if s.key == key {
			return s, nil
		}
		s.retire()
	}
	s := newServer(m, agent, workspace, srv, key)
	m.servers[k] = s
	return s, nil
}

// Stats reports every known server, sorted by agent, then server.
func (m *Manager) Stats() []Stat {
	m.mu.Lock()
	list := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		list = append(list, s)
	}
	m.mu.Unlock()
	var tree *hostfacts.Tree // every process's parent, read once for all
	stats := make([]Stat, 0, len(list))
	for _, s := range list {
		st := s.stat()
		if st.PID > 0 {
			if tree == nil {
				tree = m.procs.Tree()
			}
			st.RSS = tree.RSS(st.PID)
		}
		stats = append(stats, st)
	}
	// sort.Slice: a generic sort of a struct type costs the binary a copy
	// of the sort for its shape.
	sort.Slice(stats, func(i, j int) bool {
		return cmp.Or(cmp.Compare(stats[i].Agent, stats[j].Agent), cmp.Compare(stats[i].Server, stats[j].Server)) < 0
	})
	return stats
}

// Forget drops an agent's servers (it was evicted or rebuilt): those not
// in use stop now, the others once their calls are done.
func (m *Manager) Forget(agent string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, s := range m.servers {
		if k.agent == agent {
			delete(m.servers, k)
			s.retire()
		}
	}
}

// Close stops every server (closing its input, then SIGTERM, then
// SIGKILL) and waits for them, or for ctx. Later calls fail.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	list := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		list = append(list, s)
	}
	clear(m.servers)
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range list {
		wg.Go(func() { s.shutdown() })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("some MCP servers did not stop in time: " + ctx.Err().Error())
	}
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}
