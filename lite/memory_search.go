package lite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/memory"
)

// ErrNoMemory is returned by SearchMemory for an agent without
// spec.memory; its text says how to give it one.
var ErrNoMemory = fmt.Errorf("%w: add `memory: {backend: filesystem}` to the spec of its agent.yaml", httpapi.ErrNoMemory)

// SearchMemory searches an agent's memory files and past sessions as its
// memory tool's recall with a query does.
func (a *App) SearchMemory(ctx context.Context, agent string, q memory.Query) (memory.Results, error) {
	spec, err := a.Agents.ReadSpec(agent)
	if err != nil {
		return memory.Results{}, err
	}
	if !spec.HasMemory() {
		return memory.Results{}, fmt.Errorf("agent %s: %w", agent, ErrNoMemory)
	}
	return a.memIndex(spec).Search(ctx, q)
}

// searchMemoryAPI is SearchMemory in the HTTP API's terms.
func (a *App) searchMemoryAPI(ctx context.Context, agent, q string, limit int) (httpapi.MemoryResults, error) {
	res, err := a.SearchMemory(ctx, agent, memory.Query{Text: q, Limit: limit})
	if errors.Is(err, agentcache.ErrAgentNotFound) {
		return httpapi.MemoryResults{}, fmt.Errorf("%w (%w)", err, fs.ErrNotExist)
	}
	out := httpapi.MemoryResults{Mode: res.Mode, Note: res.Note, Hits: make([]httpapi.MemoryHit, len(res.Hits))}
	for i, h := range res.Hits {
		out.Hits[i] = httpapi.MemoryHit(h)
	}
	return out, err
}
