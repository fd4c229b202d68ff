package lite

import (
	"slices"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/doctor"
)

// healthOptions are what the health report (lite/doctor) reads of the
// running daemon: its config, agent cache, scheduler and host-facts
// reader, all made by Open.
func (a *App) healthOptions() doctor.HealthOptions {
	return doctor.HealthOptions{Config: a.Config, Agents: healthAgents{a.Agents}, Schedules: a.Schedules(), Host: a.host}
}

// healthAgents is the agent cache as the health report reads it
// (doctor.Agents).
type healthAgents struct{ c *agentCache }

var _ doctor.Agents = healthAgents{}

func (h healthAgents) LoadedCount() int                        { return h.c.loadedCount() }
func (h healthAgents) LoadedSpecs() []*agents.Agent            { return h.c.loadedSpecs() }
func (h healthAgents) Spec(name string) (*agents.Agent, error) { return h.c.spec(name) }

// loadedSpecs lists the specs of the agents built, in name order.
func (c *agentCache) loadedSpecs() []*agents.Agent {
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
