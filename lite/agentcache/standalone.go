package agentcache

import (
	"log/slog"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// The cache outside a daemon: "agent validate", "tool run", tests.

// NewStandalone is an agent cache outside a daemon (agent validate, tool
// run, tests): its sandboxes watch no database's disk reserve, and the
// tools that need a daemon are left out.
func NewStandalone(cfg *config.Config, log *slog.Logger) *Cache {
	return New(Options{Config: cfg, Logger: log, Tools: toolset.New(StandaloneTools(cfg, log))})
}

// StandaloneTools are the tool factory's options outside a daemon: its
// sandbox manager has no database, so no disk reserve to watch.
func StandaloneTools(cfg *config.Config, log *slog.Logger) toolset.Options {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return toolset.Options{Config: cfg, Logger: log,
		Sandboxes: sandbox.New(sandbox.Options{Config: cfg.Sandbox, DataDir: cfg.DataDir, Logger: log})}
}

// LoadAgentTools builds one agent, with its tools, outside a running
// daemon (for `agnx-lite tool run`); close releases them. A nil log
// discards the build's messages; p, when set, shows the first compile of
// a WASM tool.
func LoadAgentTools(cfg *config.Config, name string, log *slog.Logger, p *toolset.Progress) (*runtime.LoadedAgent, func(), error) {
	to := StandaloneTools(cfg, log)
	to.Progress = p
	// Tools call no model: no key needed.
	c := New(Options{Config: cfg, Logger: to.Logger, Tools: toolset.New(to), NewProvider: providerOrAbsent})
	a, err := c.LoadAgent(name)
	if err != nil {
		c.Close() // the WASM engine and the sandbox owner it may have started
		return nil, nil, err
	}
	return a, c.Close, nil
}

// Check is the outcome of building one agent for "agent validate".
type Check struct {
	Name string
	// Err is why the agent does not load; nil for a good agent.
	Err error
	// Spec is the good agent's spec as it was built (its Warnings with
	// the data dir's directives'); nil when Err is set.
	Spec *agents.Agent
}

// CheckAgents builds each named agent exactly as the daemon does on its
// first use (agent.yaml, prompt files, provider, tools with their WASM
// modules compiled, policy) and releases it again: "agent validate" says
// ok only for an agent that would load. No MCP server is started. A nil
// log discards the build's messages.
func CheckAgents(cfg *config.Config, names []string, log *slog.Logger) []Check {
	to := StandaloneTools(cfg, log)
	to.CheckOnly = true // no MCP server is started to validate
	c := New(Options{Config: cfg, Logger: to.Logger, Tools: toolset.New(to)})
	defer c.Close()
	out := make([]Check, len(names))
	for i, name := range names {
		la, err := c.build(name, filepath.Join(cfg.AgentsDir, name))
		out[i] = Check{Name: name, Err: err}
		if err == nil {
			out[i].Spec = la.Spec
			toolset.CloseTools(la.Tools)
		}
	}
	return out
}
