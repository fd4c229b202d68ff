package agentcache

import (
	"fmt"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// An agent's fixed cost is the memory it holds for as long as it is
// loaded, whatever it does: its WASM tools compiled (lite/toolset
// measures them), some 20 MiB for each Go module. Evicting it frees that memory only until its
// next message builds it again, so the memory guard does not treat it as
// memory it can win back. Instead the fixed costs are budgeted:
//
//   - an agent whose fixed cost alone is over the budget is refused at its
//     build, with the figure and the setting to raise, and that refusal
//     is kept until its files change (no build per message);
//   - the loaded agents' fixed costs together stay within the budget: the
//     least recently used idle agent that holds one is evicted when a
//     newly built one would go over;
//   - the guard, over its high-water mark, evicts the idle agents that
//     hold none, and then sheds sessions and turns as before, but never
//     evicts an agent that the budget holds;
//   - the heap's soft limit is the memory limit less the agents' code,
//     which the Go runtime does not count as its own (lite/upkeep).
//
// The budget is runtime.memory_limit_mb less Reserve, what the
// daemon needs beside its agents: measured on amd64, an idle daemon holds
// 5–6 MiB of anonymous memory and a turn calling a Go WASM tool adds some
// 10 MiB for the call's instance until it is collected. The memory guard
// never sets the heap's soft limit below it (upkeep.GuardOptions.Reserve).
const Reserve = 16 << 20

// agentBudget is the budget of agents' fixed costs for a memory limit of
// limitMB; 0 without a limit (no budget).
func agentBudget(limitMB int) int64 {
	if limitMB <= 0 {
		return 0
	}
	return max(int64(limitMB)<<20-Reserve, 1)
}

// fixedCost is what an agent's tools hold while it is loaded.
func fixedCost(ts []runtime.Tool) toolset.Held {
	var n toolset.Held
	for _, t := range ts {
		if h, ok := t.(toolset.Holder); ok {
			n.Code += h.HeldBytes().Code
			n.Heap += h.HeldBytes().Heap
		}
	}
	return n
}

// AgentTooBigError is an agent whose tools hold more memory than the
// memory budget leaves for agents: it is refused at its build.
type AgentTooBigError struct {
	Agent string
	// Held is what its tools hold, in bytes; Tools says it per tool
	// ("calc 19 MiB").
	Held  int64
	Tools []string
	// Budget is what runtime.memory_limit_mb (LimitMB) leaves for
	// agents' tools, in bytes.
	Budget  int64
	LimitMB int

	// files and mod are the agent's files and their newest time when it
	// was refused: it is not built again until they change.
	files []string
	mod   time.Time
}

func (e *AgentTooBigError) Error() string {
	return fmt.Sprintf("agent %s needs %d MiB of memory for its compiled WASM tools (%s), more than the %d MiB that runtime.memory_limit_mb = %d leaves for agents: "+
		"set runtime.memory_limit_mb to at least %d in agnx.yaml, or give the agent fewer WASM tools",
		e.Agent, mib(e.Held), strings.Join(e.Tools, ", "), e.Budget>>20, e.LimitMB, mib(e.Held+Reserve))
}

// Unwrap makes the refusal an *agents.Error, the agent's own problem to
// callers that tell it from the daemon's (the API answers 422).
func (e *AgentTooBigError) Unwrap() error { return &agents.Error{Msg: e.Error()} }

// mib is n bytes in MiB, rounded up.
func mib(n int64) int64 { return (n + 1<<20 - 1) >> 20 }

// fits refuses an agent whose tools hold more than the budget, with c.mu
// not held.
func (c *Cache) fits(spec *agents.Agent, ts []runtime.Tool) error {
	held := fixedCost(ts).Total()
	c.mu.Lock()
	budget, limitMB := c.budget, c.limitMB
	c.mu.Unlock()
	if budget == 0 || held <= budget {
		return nil
	}
	e := &AgentTooBigError{Agent: spec.Name, Held: held, Budget: budget, LimitMB: limitMB,
		files: spec.Files, mod: spec.ModTime}
	for _, t := range ts {
		if h, ok := t.(toolset.Holder); ok {
			e.Tools = append(e.Tools, fmt.Sprintf("%s %d MiB", t.Spec().Name, mib(h.HeldBytes().Total())))
		}
	}
	return e
}

// setBudget sets the budget of agents' fixed costs for a memory limit of
// limitMB (0: none).
func (c *Cache) setBudget(limitMB int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget, c.limitMB = agentBudget(limitMB), limitMB
}

// stillRefused returns the refusal of an agent that was too big, with
// c.mu held, while its files are as they were then.
func (c *Cache) stillRefused(name string) error {
	r := c.refused[name]
	if r == nil {
		return nil
	}
	if newestMod(r.files).After(r.mod) {
		delete(c.refused, name)
		return nil
	}
	return r
}

// heldTotal is what the loaded agents hold together, with c.mu held.
func (c *Cache) heldTotal() toolset.Held {
	var n toolset.Held
	for _, ca := range c.loaded {
		n.Code += ca.held.Code
		n.Heap += ca.held.Heap
	}
	return n
}

// HeldCode is what the loaded agents hold outside the Go heap (compiled
// code): the memory guard takes it off the heap's soft limit.
func (c *Cache) HeldCode() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heldTotal().Code
}

// overBudget evicts the least recently used idle agents that hold memory
// while the loaded agents together hold more than the budget, sparing keep
// (just built) and pinned ones, with c.mu held; it reports how many went.
func (c *Cache) overBudget(keep string) int {
	n := 0
	for c.budget > 0 && c.heldTotal().Total() > c.budget {
		victim := ""
		for name, ca := range c.loaded {
			if name == keep || c.pins[name] > 0 || ca.held.Total() == 0 {
				continue
			}
			if victim == "" || ca.used.Before(c.loaded[victim].used) {
				victim = name
			}
		}
		if victim == "" {
			return n
		}
		c.evict(victim, EvictedBudget)
		n++
	}
	return n
}

// Why an agent left the cache, for agnx_agent_evictions_total.
const (
	EvictedLRU    = "lru"    // runtime.max_loaded_agents
	EvictedBudget = "budget" // the fixed costs' budget
	EvictedMemory = "memory" // the memory guard, over its high-water mark
)

// Counts are the cache's counters since it was made, for the metrics.
type Counts struct {
	Builds    uint64            // agents built (first use, change, reload)
	Evictions map[string]uint64 // agents evicted, by reason (Evicted*)
	Held      toolset.Held      // what the loaded agents hold now
	Budget    int64             // what they may hold together; 0: no limit
}

// Counts returns the cache's counters.
func (c *Cache) Counts() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := make(map[string]uint64, len(c.evictions))
	for k, v := range c.evictions {
		ev[k] = v
	}
	return Counts{Builds: c.builds, Evictions: ev, Held: c.heldTotal(), Budget: c.budget}
}
