package lite

import "github.com/agnx-lite/agnx-lite/lite/agentcache"

// writeAgents writes what the agent cache did since the daemon started and
// what its agents hold: a builds counter that climbs with every message is
// an agent built, evicted and built again.
func writeAgents(p *promWriter, c agentcache.Counts) {
	p.family("agnx_agent_builds_total", "counter", "Agents built: first uses, changed files, reloads, and builds after an eviction.")
	p.sample("agnx_agent_builds_total", float64(c.Builds))
	p.family("agnx_agent_evictions_total", "counter",
		"Agents evicted, by reason: lru (runtime.max_loaded_agents), budget (their tools' memory), memory (the memory guard).")
	for _, why := range []string{agentcache.EvictedLRU, agentcache.EvictedBudget, agentcache.EvictedMemory} {
		p.sample("agnx_agent_evictions_total", float64(c.Evictions[why]), "reason", why)
	}
	p.gauge("agnx_agents_held_bytes", "Memory the loaded agents' tools hold while loaded (compiled WASM modules).", float64(c.Held.Total()))
	if c.Budget > 0 {
		p.gauge("agnx_agents_held_budget_bytes", "What the loaded agents' tools may hold together: runtime.memory_limit_mb less the daemon's reserve.", float64(c.Budget))
	}
}
