package lite

import (
	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
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
type healthAgents struct{ c *agentcache.Cache }

var _ doctor.Agents = healthAgents{}

func (h healthAgents) LoadedCount() int                        { return h.c.Loaded() }
func (h healthAgents) LoadedSpecs() []*agents.Agent            { return h.c.LoadedSpecs() }
func (h healthAgents) Spec(name string) (*agents.Agent, error) { return h.c.ReadSpec(name) }
