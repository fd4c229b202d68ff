package lite

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// agentCache builds agents on first use and keeps at most max of them
// (least recently used goes first, never one with a turn running); a
// changed file reloads the agent on its next use, and an invalid edit keeps
// the last good version running. It implements runtime.AgentLoader and
// runtime.AgentPinner.
type agentCache struct {
	cfg *Config
	log *slog.Logger
	// newProvider is a field so tests can inject fakes.
	newProvider func(agents.Model) (runtime.Provider, error)
	// recheck is how often a cached agent's files are compared with the
	// disk.
	recheck time.Duration
	tools   *toolFactory

	// max is how many agents stay built (runtime.max_loaded_agents).
	max int

	mu     sync.Mutex
	loaded map[string]*cachedAgent
	pins   map[string]int // turns running, by agent
	// retired are the tools of versions replaced by a reload while a turn
	// still ran on them; they are closed when the agent's last turn ends.
	retired map[string][]runtime.Tool
}

type cachedAgent struct {
	agent   *runtime.LoadedAgent
	checked time.Time // when its files were last compared
	badMod  time.Time // the ModTime of an edit that failed to load
	used    time.Time // for the LRU
}

var (
	_ runtime.AgentLoader = (*agentCache)(nil)
	_ runtime.AgentPinner = (*agentCache)(nil)
)

// ErrAgentNotFound matches (errors.Is) the error for an agent with no
// folder.
var ErrAgentNotFound = runtime.ErrAgentNotFound

// AgentNotFoundError says which agent is missing and how to make it.
type AgentNotFoundError struct{ Name, Dir string }

func (e *AgentNotFoundError) Error() string {
	if !agents.ValidName(e.Name) {
		return fmt.Sprintf("%q is not a valid agent name: use letters, digits and hyphens", e.Name)
	}
	return fmt.Sprintf("no agent %q in %s: create it with \"agnx-lite agent create %s\" or list them with \"agnx-lite agent list\"",
		e.Name, e.Dir, e.Name)
}

// Is makes errors.Is(err, ErrAgentNotFound) hold.
func (e *AgentNotFoundError) Is(target error) bool { return target == ErrAgentNotFound }

func newAgentCache(cfg *Config, log *slog.Logger) *agentCache {
	sb := newSandboxes(cfg, log)
	wasm := &wasmEngine{cacheDir: filepath.Join(cfg.DataDir, "wasm-cache"), mode: cfg.Wasm.Mode, env: cfg.Sandbox.Env, log: log}
	return &agentCache{cfg: cfg, log: log, newProvider: newProvider, recheck: time.Second,
		tools: &toolFactory{sandboxes: sb, log: log, wasm: wasm}, max: max(cfg.Runtime.MaxLoadedAgents, 1),
		loaded: make(map[string]*cachedAgent), pins: make(map[string]int), retired: make(map[string][]runtime.Tool)}
}

// LoadAgent returns the agent, building it if it is not loaded or its files
// changed.
func (c *agentCache) LoadAgent(name string) (*runtime.LoadedAgent, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	ca := c.loaded[name]
	if ca != nil {
		ca.used = now
	}
	if ca != nil && now.Sub(ca.checked) < c.recheck {
		return ca.agent, nil
	}
	dir := filepath.Join(c.cfg.AgentsDir, name)
	if ca != nil {
		ca.checked = now
		mod := newestMod(append(ca.agent.Spec.Files, c.policyFiles(dir)...))
		if !mod.After(ca.agent.Spec.ModTime) || mod.Equal(ca.badMod) {
			return ca.agent, nil
		}
		la, err := c.build(name, dir)
		if err != nil {
			c.log.Error("agent edit is invalid; keeping the last good version", "agent", name, "err", err)
			ca.badMod = mod
			return ca.agent, nil
		}
		c.log.Info("agent reloaded", "agent", name)
		c.retire(name, ca.agent.Tools)
		ca.agent = la
		return la, nil
	}
	la, err := c.build(name, dir)
	if err != nil {
		return nil, err
	}
	c.loaded[name] = &cachedAgent{agent: la, checked: now, used: now}
	c.evictOver(name)
	return la, nil
}

func (c *agentCache) build(name, dir string) (*runtime.LoadedAgent, error) {
	if !agents.ValidName(name) {
		return nil, &AgentNotFoundError{Name: name, Dir: c.cfg.AgentsDir}
	}
	if _, err := os.Stat(filepath.Join(dir, agents.FileName)); errors.Is(err, fs.ErrNotExist) {
		return nil, &AgentNotFoundError{Name: name, Dir: c.cfg.AgentsDir}
	}
	spec, err := agents.Load(dir)
	if err != nil {
		return nil, err
	}
	if spec.Name != name {
		return nil, &agents.Error{File: filepath.Join(dir, agents.FileName), Line: 0,
			Msg: fmt.Sprintf("metadata.name %q does not match the folder name %q: rename one so they agree", spec.Name, name)}
	}
	spec.Workspace = c.cfg.WorkspaceDir(spec.Name)
	if err := os.MkdirAll(spec.Workspace, 0o700); err != nil {
		return nil, fmt.Errorf("create workspace of agent %s: %w", name, err)
	}
	p, err := c.newProvider(spec.Model)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", name, err)
	}
	ts, err := c.tools.build(spec)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", name, err)
	}
	policy, err := agents.LoadAgentPolicy(filepath.Join(c.cfg.DataDir, agents.PolicyFile), dir)
	if err != nil {
		closeTools(ts)
		return nil, err
	}
	return &runtime.LoadedAgent{Spec: spec, Provider: p, Tools: ts, Policy: policy}, nil
}

// policyFiles are the tiers of an agent's policy: the data dir's, the
// agent's, the agent's local one.
func (c *agentCache) policyFiles(dir string) []string {
	return []string{filepath.Join(c.cfg.DataDir, agents.PolicyFile), filepath.Join(dir, agents.PolicyFile),
		filepath.Join(dir, agents.PolicyLocalFile)}
}

// newestMod is the newest modification time of files (missing ones are
// skipped: a tier created later changes its folder's time).
func newestMod(files []string) time.Time {
	var newest time.Time
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.ModTime().After(newest) {
			newest = st.ModTime()
		}
	}
	return newest
}

// loadedNames lists the agents built so far, sorted.
func (c *agentCache) loadedNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.loaded))
	for n := range c.loaded {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// reload rebuilds a loaded agent now; on error the last good version stays.
func (c *agentCache) reload(name string) error {
	la, err := c.build(name, filepath.Join(c.cfg.AgentsDir, name))
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.loaded[name]; old != nil {
		c.retire(name, old.agent.Tools)
	}
	now := time.Now()
	c.loaded[name] = &cachedAgent{agent: la, checked: now, used: now}
	return nil
}

// close releases every loaded agent's tools and the WASM engine.
func (c *agentCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ca := range c.loaded {
		closeTools(ca.agent.Tools)
	}
	for _, ts := range c.retired {
		closeTools(ts)
	}
	c.loaded, c.retired = map[string]*cachedAgent{}, map[string][]runtime.Tool{}
	c.tools.wasm.close()
	c.tools.sandboxes.close()
}

// LoadAgentTools builds one agent, with its tools, outside a running
// daemon (for `agnx-lite tool run`); close releases them.
func LoadAgentTools(cfg *Config, name string, log *slog.Logger) (*runtime.LoadedAgent, func(), error) {
	c := newAgentCache(cfg, log)
	a, err := c.LoadAgent(name)
	if err != nil {
		c.close() // the WASM engine and the sandbox owner it may have started
		return nil, nil, err
	}
	return a, c.close, nil
}

// ValidateAgents builds each named agent exactly as the daemon does on its
// first use (agent.yaml, prompt files, provider, tools with their WASM
// modules compiled, policy) and releases it again: "agent validate" says
// ok only for an agent that would load. It returns one error per name, nil
// for a good agent. A nil log discards the build's messages.
func ValidateAgents(cfg *Config, names []string, log *slog.Logger) []error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := newAgentCache(cfg, log)
	defer c.close()
	errs := make([]error, len(names))
	for i, name := range names {
		la, err := c.build(name, filepath.Join(cfg.AgentsDir, name))
		if err == nil {
			closeTools(la.Tools)
		}
		errs[i] = err
	}
	return errs
}
