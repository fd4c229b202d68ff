package agentcache

import (
	"os"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime/memory"
)

// MemIndexes gives each agent with spec.memory the search behind its
// recall with a query: an index over its memory files and its past
// sessions, kept in db (the loop's group commit in the daemon). Indexes
// are cheap values: building one reads nothing until its first search;
// all of them share one memory.Shared (the agents' sync locks, the
// sessions' owners).
func MemIndexes(db memory.DB, world string) func(a *agents.Agent) memory.Searcher {
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
