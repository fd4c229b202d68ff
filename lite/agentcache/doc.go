// Package agentcache owns the agents as the daemon runs them: each is
// built on its first use (its files read, its model's provider made, its
// tools built by lite/toolset, its policy loaded), kept while it is used
// (at most runtime.max_loaded_agents, least recently used evicted first,
// never one with a turn running), rebuilt when its files change, and
// refused when its tools hold more memory than the budget leaves.
//
// Two calls answer two questions. Spec reads and validates an agent's
// files and never waits for a build: admission, routing and the API need
// no more. LoadAgent is the build (runtime.AgentLoader's name for it): it
// returns the agent ready to run a turn, building it if it must.
//
// The package also holds what a build needs of the outside: the model
// providers (NewProvider, the one map of concrete clients), the memory
// index behind an agent's recall (MemIndexes) and the pull of an Ollama
// model (PullModel). What the daemon wants to know of builds (the memory
// guard's headroom, the heartbeats' view of changes) it is told through
// Hooks, given at construction.
package agentcache
