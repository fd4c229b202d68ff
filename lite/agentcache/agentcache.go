package agentcache

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Cache builds agents on first use and keeps at most max of them (least
// recently used goes first, never one with a turn running); a changed
// file reloads the agent on its next use, and an invalid edit keeps the
// last good version running. It implements runtime.AgentCache and
// runtime.AgentPinner. Builds run without its mutex, one at a time per
// agent.
type Cache struct {
	cfg *config.Config
	log *slog.Logger
	// newProvider makes an agent's model client (Options.NewProvider).
	newProvider func(agents.Model) (runtime.Provider, error)
	// recheck is how often a cached agent's files are compared with the
	// disk.
	recheck time.Duration
	// tools builds the agents' tools; the cache closes it with itself.
	tools *toolset.Factory
	// hooks are told of builds (Options.Hooks); never nil.
	hooks Hooks

	// max is how many agents stay built (runtime.max_loaded_agents).
	max int
	// budget is what the loaded agents' tools may hold together, in
	// bytes, for the memory limit limitMB (agentbudget.go); 0: no limit.
	budget  int64
	limitMB int

	mu     sync.Mutex
	loaded map[string]*cachedAgent
	pins   map[string]int // turns running, by agent
	// retired are the tools of versions replaced by a reload while a turn
	// still ran on them; they are closed when the agent's last turn ends.
	retired map[string][]runtime.Tool
	// building are the builds under way, by agent: a second caller waits
	// for the first's result instead of building again.
	building map[string]*agentBuild
	closed   bool // by Close: nothing more is built
	// refused are the agents too big for the budget, kept until their
	// files change: a message to one is refused without a build.
	refused map[string]*AgentTooBigError
	// builds and evictions count what the cache did (Counts).
	builds    uint64
	evictions map[string]uint64
}

// Hooks are what the cache tells the daemon of its builds. The root
// forwards them to the memory guard and the heartbeats, which are made
// after the cache (the guard evicts from it).
type Hooks interface {
	// Building is told a build starts; it returns what to call when it
	// ends (the memory guard gives builds headroom).
	Building() (done func())
	// Built is told of every agent built and installed, with the cache's
	// mutex held: it must not block (heartbeats learn of changes).
	Built(*runtime.LoadedAgent)
}

// noHooks is Hooks outside a daemon: nobody listens.
type noHooks struct{}

func (noHooks) Building() func() { return func() {} }

func (noHooks) Built(*runtime.LoadedAgent) {}

// Options configure New. Config and Tools are required.
type Options struct {
	Config *config.Config
	// Logger gets the builds' and evictions' messages (nil: discarded).
	Logger *slog.Logger
	// Tools builds the agents' tools; the cache closes it with itself.
	Tools *toolset.Factory
	// Hooks are told of builds (nil: nobody is).
	Hooks Hooks
	// NewProvider makes an agent's model client (nil: NewProvider, the
	// real providers); tests put fakes here.
	NewProvider func(agents.Model) (runtime.Provider, error)
	// Recheck is how often a cached agent's files are compared with the
	// disk (0: every second; negative: on every use).
	Recheck time.Duration
	// LimitMB is the memory limit whose budget the agents' tools share
	// (agentbudget.go); 0: runtime.memory_limit_mb, negative: no budget.
	LimitMB int
}

// agentBuild is one build under way; agent and err are set before done
// closes.
type agentBuild struct {
	done  chan struct{}
	agent *runtime.LoadedAgent
	err   error
}

type cachedAgent struct {
	agent   *runtime.LoadedAgent
	checked time.Time // when its files were last compared
	badMod  time.Time // the ModTime of an edit that failed to load
	used    time.Time // for the LRU
	// held is what its tools hold while it is loaded (agentbudget.go).
	held toolset.Held
	// stale is set when one of its MCP servers changed its tool list:
	// the next use rebuilds it.
	stale bool
}

var (
	_ runtime.AgentCache  = (*Cache)(nil)
	_ runtime.AgentPinner = (*Cache)(nil)
)

// New is an agent cache that builds nothing until an agent is used.
func New(o Options) *Cache {
	log, hooks, newProvider := o.Logger, o.Hooks, o.NewProvider
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if hooks == nil {
		hooks = noHooks{}
	}
	if newProvider == nil {
		newProvider = NewProvider
	}
	recheck := o.Recheck
	switch {
	case recheck == 0:
		recheck = time.Second
	case recheck < 0:
		recheck = 0
	}
	limitMB := o.LimitMB
	switch {
	case limitMB == 0:
		limitMB = o.Config.Runtime.MemoryLimitMB
	case limitMB < 0:
		limitMB = 0
	}
	return &Cache{cfg: o.Config, log: log, newProvider: newProvider, recheck: recheck, tools: o.Tools, hooks: hooks,
		max:    max(o.Config.Runtime.MaxLoadedAgents, 1),
		loaded: make(map[string]*cachedAgent), pins: make(map[string]int), retired: make(map[string][]runtime.Tool),
		building: make(map[string]*agentBuild), refused: make(map[string]*AgentTooBigError), evictions: make(map[string]uint64),
		budget: agentBudget(limitMB), limitMB: limitMB}
}

// CachedAgent returns the agent when it is built and its files did not
// change since; it never builds (runtime.AgentCache). The loop calls it on
// its own goroutine.
func (c *Cache) CachedAgent(name string) (*runtime.LoadedAgent, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ca := c.loaded[name]
	if ca == nil || c.building[name] != nil {
		return nil, false
	}
	now := time.Now()
	if _, ok := c.fresh(name, ca, now); !ok {
		return nil, false
	}
	ca.used = now
	return ca.agent, true
}

// LoadAgent returns the agent, building it if it is not loaded or its files
// changed. Concurrent calls for one agent share one build, and no lock is
// held while it runs: other agents are looked up, pinned and built
// meanwhile.
func (c *Cache) LoadAgent(name string) (*runtime.LoadedAgent, error) {
	la, err := c.load(name, false)
	if la != nil {
		return la, nil // an invalid edit keeps the last good version
	}
	return nil, err
}

// Spec returns the agent's spec without building it and without waiting
// for a build: the built agent's while its files are unchanged, otherwise
// its files read afresh as a build reads them (no provider, no tool,
// nothing started). An edit that does not read leaves the built agent's,
// as LoadAgent keeps the last good agent. Admission, routing, delivery
// settings and the API's view of an agent need only the spec: a chat's
// first message must not wait for another agent's WASM tools to compile.
func (c *Cache) Spec(name string) (*agents.Agent, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, runtime.ErrClosed
	}
	var last *agents.Agent
	if ca := c.loaded[name]; ca != nil {
		last = ca.agent.Spec
		if _, ok := c.fresh(name, ca, time.Now()); ok && c.building[name] == nil {
			ca.used = time.Now()
			c.mu.Unlock()
			return last, nil
		}
	}
	c.mu.Unlock()
	spec, err := c.prepared(name, filepath.Join(c.cfg.AgentsDir, name))
	if err != nil && last != nil {
		return last, nil
	}
	return spec, err
}

// Reload rebuilds an agent now, loaded or not; on error the last good
// version stays. The API's reload-agents calls it for every loaded agent.
func (c *Cache) Reload(name string) error {
	_, err := c.load(name, true)
	return err
}

// load returns the agent, building it when it is missing, its files
// changed, or force is set. A rebuild that fails returns the last good
// version with the build's error.
func (c *Cache) load(name string, force bool) (*runtime.LoadedAgent, error) {
	c.mu.Lock()
	for {
		if c.closed {
			c.mu.Unlock()
			return nil, runtime.ErrClosed
		}
		b := c.building[name]
		if b == nil {
			break
		}
		c.mu.Unlock()
		<-b.done
		if !force {
			return b.agent, b.err
		}
		c.mu.Lock() // that build may predate the edit a reload is for
	}
	now := time.Now()
	ca := c.loaded[name]
	if err := c.stillRefused(name); err != nil && ca == nil && !force {
		c.mu.Unlock()
		return nil, err
	}
	var mod time.Time
	if ca != nil {
		ca.used = now
		var ok bool
		if mod, ok = c.fresh(name, ca, now); ok && !force {
			c.mu.Unlock()
			return ca.agent, nil
		}
	}
	b := &agentBuild{done: make(chan struct{})}
	c.building[name] = b
	c.builds++
	c.mu.Unlock()

	la, err := c.build(name, filepath.Join(c.cfg.AgentsDir, name))

	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.building, name)
	b.agent, b.err = c.install(name, la, err, mod, force)
	close(b.done)
	return b.agent, b.err
}

// install puts a finished build in the cache, with c.mu held. A failed
// rebuild keeps the last good version: a reload reports the error, a
// change found on use is logged and not tried again until the files
// change again. A policy that does not load is the exception: the agent
// is dropped and refused.
func (c *Cache) install(name string, la *runtime.LoadedAgent, err error, mod time.Time, force bool) (*runtime.LoadedAgent, error) {
	now := time.Now()
	if c.closed {
		if err == nil {
			toolset.CloseTools(la.Tools)
		}
		return nil, runtime.ErrClosed
	}
	ca := c.loaded[name] // evicted while it built: nil
	var tooBig *AgentTooBigError
	if errors.As(err, &tooBig) {
		c.refused[name] = tooBig
	} else {
		delete(c.refused, name)
	}
	switch {
	case err != nil && ca == nil:
		return nil, err
	case errors.As(err, new(*policyError)):
		// Unlike other edits, a policy that does not parse is not worked
		// around with the last good one: the edit may have been a deny
		// rule. The agent is refused until the file is fixed.
		c.log.Error("agent policy is invalid; the agent is refused until it is fixed", "agent", name, "err", err)
		c.retire(name, ca.agent.Tools)
		delete(c.loaded, name)
		return nil, err
	case err != nil && force:
		return ca.agent, err
	case err != nil:
		c.log.Error("agent edit is invalid; keeping the last good version", "agent", name, "err", err)
		ca.badMod, ca.checked, ca.stale = mod, now, false
		return ca.agent, nil
	case ca != nil:
		if !force {
			c.log.Info("agent reloaded", "agent", name)
		}
		c.logWarnings(la)
		c.retire(name, ca.agent.Tools)
		ca.agent, ca.checked, ca.used, ca.badMod, ca.stale = la, now, now, time.Time{}, false
		ca.held = fixedCost(la.Tools)
		c.overBudget(name)
		c.built(la)
		return la, nil
	}
	c.logWarnings(la)
	c.loaded[name] = &cachedAgent{agent: la, checked: now, used: now, held: fixedCost(la.Tools)}
	c.evictOver(name)
	c.overBudget(name)
	c.built(la)
	return la, nil
}

// built tells the hooks of a newly installed agent, with c.mu held.
func (c *Cache) built(la *runtime.LoadedAgent) { c.hooks.Built(la) }

// logWarnings logs each warning of a newly built agent, once per build.
func (c *Cache) logWarnings(la *runtime.LoadedAgent) {
	for _, w := range la.Spec.Warnings {
		c.log.Warn("agent warning", "agent", la.Spec.Name, "warning", w)
	}
}

// fresh reports whether a loaded agent can be used as it is: its files
// were compared with the disk less than recheck ago, or they did not
// change since it was built (or changed into an edit that already failed
// to build). Otherwise it returns the newest modification time, for the
// rebuild.
func (c *Cache) fresh(name string, ca *cachedAgent, now time.Time) (time.Time, bool) {
	if ca.stale {
		return ca.agent.Spec.ModTime, false
	}
	if now.Sub(ca.checked) < c.recheck {
		return time.Time{}, true
	}
	mod := newestMod(append(ca.agent.Spec.Files, c.policyFiles(filepath.Join(c.cfg.AgentsDir, name))...))
	if !mod.After(ca.agent.Spec.ModTime) || mod.Equal(ca.badMod) {
		ca.checked = now
		return mod, true
	}
	return mod, false
}

func (c *Cache) build(name, dir string) (*runtime.LoadedAgent, error) {
	defer c.hooks.Building()()
	spec, err := c.prepared(name, dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(spec.Workspace, 0o700); err != nil {
		return nil, fmt.Errorf("create workspace of agent %s: %w", name, err)
	}
	// The policy first: a broken one refuses the agent (policyError)
	// before any tool is built.
	policy, err := agents.LoadAgentPolicy(filepath.Join(c.cfg.DataDir, agents.PolicyFile), dir)
	if err != nil {
		return nil, &policyError{err}
	}
	p, err := c.newProvider(spec.Model)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", name, err)
	}
	ts, err := c.tools.Build(spec)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", name, err)
	}
	if err := c.fits(spec, ts); err != nil {
		toolset.CloseTools(ts)
		return nil, err
	}
	return &runtime.LoadedAgent{Spec: spec, Provider: p, Tools: ts, Policy: policy, Hooks: spec.Hooks}, nil
}

// LoadedSpecs lists the specs of the agents built, in name order.
func (c *Cache) LoadedSpecs() []*agents.Agent {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*agents.Agent, 0, len(c.loaded))
	for _, ca := range c.loaded {
		if ca.agent != nil && ca.agent.Spec != nil {
			out = append(out, ca.agent.Spec)
		}
	}
	slices.SortFunc(out, func(a, b *agents.Agent) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Tools is the tool factory the agents' tools come from (its MCP
// servers' stats, for doctor and metrics).
func (c *Cache) Tools() *toolset.Factory { return c.tools }

// MarkStale makes the agent's next use rebuild it: one of its MCP servers
// changed its tool list (toolset.AgentCache). Safe from any goroutine.
func (c *Cache) MarkStale(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ca := c.loaded[name]; ca != nil {
		ca.stale = true
	}
}

// LoadedNames lists the agents built so far, sorted.
func (c *Cache) LoadedNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.loaded))
	for n := range c.loaded {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Close releases every loaded agent's tools and the WASM engine, once the
// builds under way have finished (a build cannot be interrupted); what
// they built is released too, and no build starts after.
func (c *Cache) Close() {
	c.mu.Lock()
	c.closed = true
	var builds []*agentBuild
	for _, b := range c.building {
		builds = append(builds, b)
	}
	c.mu.Unlock()
	for _, b := range builds {
		<-b.done
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ca := range c.loaded {
		toolset.CloseTools(ca.agent.Tools)
	}
	for _, ts := range c.retired {
		toolset.CloseTools(ts)
	}
	c.loaded, c.retired = map[string]*cachedAgent{}, map[string][]runtime.Tool{}
	c.tools.Close()
}
