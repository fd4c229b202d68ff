package agentcache

import (
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// The LRU side of Cache: what stays built, what goes. Everything here
// runs with c.mu held by the caller, except the exported Pin, Unpin,
// EvictIdle and Loaded.

// Pin marks the agent as having a turn running: it is not evicted.
func (c *Cache) Pin(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pins[name]++
}

// Unpin undoes one Pin.
func (c *Cache) Unpin(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pins[name]--; c.pins[name] <= 0 {
		delete(c.pins, name)
		toolset.CloseTools(c.retired[name])
		delete(c.retired, name)
	}
}

// retire releases the tools of a replaced version of an agent: at once,
// or, while a turn still runs on it, when the agent's last turn ends.
func (c *Cache) retire(name string, tools []runtime.Tool) {
	if c.pins[name] > 0 {
		c.retired[name] = append(c.retired[name], tools...)
		return
	}
	toolset.CloseTools(tools)
}

// evictOver evicts the least recently used agents beyond max, sparing
// keep (just loaded) and pinned ones. With every agent pinned the cache
// stays over max until turns end.
func (c *Cache) evictOver(keep string) {
	for len(c.loaded) > c.max {
		victim := ""
		for name, ca := range c.loaded {
			if name == keep || c.pins[name] > 0 {
				continue
			}
			if victim == "" || ca.used.Before(c.loaded[victim].used) {
				victim = name
			}
		}
		if victim == "" {
			return
		}
		c.evict(victim, EvictedLRU)
	}
}

// evict frees an agent: its compiled WASM modules are closed (calls
// already running finish first). why is counted (agentbudget.go).
func (c *Cache) evict(name, why string) {
	if ca := c.loaded[name]; ca != nil {
		toolset.CloseTools(ca.agent.Tools)
		delete(c.loaded, name)
		c.tools.MCP().Forget(name)
		c.evictions[why]++
		c.log.Debug("agent evicted", "agent", name, "reason", why)
	}
}

// EvictIdle evicts, for the memory guard, every agent without a running
// turn that holds no fixed cost, and those that do beyond the budget (none
// while the budget holds); it reports how many went. An agent the budget
// holds stays: evicting it would win its memory back only until its next
// message builds it again (agentbudget.go).
func (c *Cache) EvictIdle() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for name, ca := range c.loaded {
		if c.pins[name] == 0 && (ca.held.Total() == 0 || c.budget == 0) {
			c.evict(name, EvictedMemory)
			n++
		}
	}
	return n + c.overBudget("")
}

// Loaded is how many agents are built.
func (c *Cache) Loaded() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.loaded)
}
