package lite

import (
	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/upkeep"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// upkeepAgents is the agent cache as lite/upkeep sees it: the memory
// guard evicts idle agents and takes their compiled code off the heap's
// soft limit, retention reads each agent's session policy from its spec.
// The cache's own methods stay unexported until it has a package of its
// own.
type upkeepAgents struct{ c *agentCache }

var (
	_ upkeep.Agents  = upkeepAgents{}
	_ upkeep.Specs   = upkeepAgents{}
	_ upkeep.Shedder = (*runtime.Loop)(nil)
	_ upkeep.Expirer = (*runtime.Loop)(nil)
	_ upkeep.Mapper  = (*storage.Store)(nil)
)

func (u upkeepAgents) EvictIdle() int                          { return u.c.evictIdle() }
func (u upkeepAgents) HeldCode() int64                         { return u.c.heldCode() }
func (u upkeepAgents) Spec(name string) (*agents.Agent, error) { return u.c.spec(name) }
