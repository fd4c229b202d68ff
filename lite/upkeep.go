package lite

import (
	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/upkeep"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// upkeepAgents is the agent cache as lite/upkeep sees it: the memory
// guard evicts idle agents and takes their compiled code off the heap's
// soft limit, retention reads each agent's session policy from its spec.
// Spec is the agent's own files as they are now (Cache.ReadSpec), never a
// build.
type upkeepAgents struct{ c *agentcache.Cache }

var (
	_ upkeep.Agents  = upkeepAgents{}
	_ upkeep.Specs   = upkeepAgents{}
	_ upkeep.Shedder = (*runtime.Loop)(nil)
	_ upkeep.Expirer = (*runtime.Loop)(nil)
	_ upkeep.Mapper  = (*storage.Store)(nil)
)

func (u upkeepAgents) EvictIdle() int                          { return u.c.EvictIdle() }
func (u upkeepAgents) HeldCode() int64                         { return u.c.HeldCode() }
func (u upkeepAgents) Spec(name string) (*agents.Agent, error) { return u.c.ReadSpec(name) }

// cacheHooks is what the agent cache tells the daemon of its builds: the
// memory guard gives a build headroom (when runtime.memory_limit_mb sets
// one), the heartbeats learn of every agent built. Both are made after
// the cache, so it holds the App, whose fields Open fills in before the
// loop runs.
type cacheHooks struct{ a *App }

var _ agentcache.Hooks = cacheHooks{}

func (h cacheHooks) Building() (done func()) {
	if h.a.guard == nil {
		return func() {}
	}
	return h.a.guard.Building()
}
func (h cacheHooks) Built(la *runtime.LoadedAgent) { h.a.hb.Built(la) }
