package lite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/memory"
)

// memIndexes gives each agent with spec.memory the search behind its
// recall with a query: an index over its memory files and its past
// sessions, kept in db (the loop's group commit in the daemon). Indexes
// are cheap values: building one reads nothing until its first search;
// all of them share one memory.Shared (the agents' sync locks, the
// sessions' owners).
func memIndexes(db memory.DB, world string) func(a *agents.Agent) memory.Searcher {
	shared := memory.NewShared()
	return func(a *agents.Agent) memory.Searcher {
		return memory.NewIndex(memory.IndexOptions{Agent: a.Name, MemoryDir: filepath.Join(a.Dir, "memory"),
			WorldDir: world, DB: db, Embedder: embedder(a), Shared: shared})
	}
}

// embedder is the embeddings client the agent's spec.memory names, or nil
// (keyword search) when it names none or the client cannot be made, which
// the agent's warnings then say. Without a base_url of its own it uses the
// chat model's when both are the same provider: one Ollama for both.
func embedder(a *agents.Agent) memory.Embedder {
	e := a.Memory.Embeddings
	if e.Model == "" {
		return nil
	}
	base := e.BaseURL
	if base == "" && e.Provider == a.Model.Provider {
		base = a.Model.BaseURL
	}
	emb, err := memory.NewEmbedder(e.Provider, e.Model, base, os.Getenv, sharedHTTP())
	if err != nil {
		a.Warnings = append(a.Warnings, err.Error()+"; memory search uses keywords only")
		return nil
	}
	return emb
}

// ErrNoMemory is returned by SearchMemory for an agent without
// spec.memory; its text says how to give it one.
var ErrNoMemory = fmt.Errorf("%w: add `memory: {backend: filesystem}` to the spec of its agent.yaml", httpapi.ErrNoMemory)

// SearchMemory searches an agent's memory files and past sessions as its
// memory tool's recall with a query does.
func (a *App) SearchMemory(ctx context.Context, agent string, q memory.Query) (memory.Results, error) {
	spec, err := a.Agents.spec(agent)
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
	if errors.Is(err, ErrAgentNotFound) {
		return httpapi.MemoryResults{}, fmt.Errorf("%w (%w)", err, fs.ErrNotExist)
	}
	out := httpapi.MemoryResults{Mode: res.Mode, Note: res.Note, Hits: make([]httpapi.MemoryHit, len(res.Hits))}
	for i, h := range res.Hits {
		out.Hits[i] = httpapi.MemoryHit(h)
	}
	return out, err
}
