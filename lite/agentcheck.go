package lite

import (
	"log/slog"
	"slices"

	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/autonomy"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

// ValidateAgents builds each named agent exactly as the daemon does on its
// first use (agent.yaml, prompt files, provider, tools with their WASM
// modules compiled, policy) and releases it again: "agent validate" says
// ok only for an agent that would load. It returns one error per name, nil
// for a good agent. A nil log discards the build's messages.
func ValidateAgents(cfg *config.Config, names []string, log *slog.Logger) []error {
	errs := make([]error, len(names))
	for i, r := range CheckAgents(cfg, names, log) {
		errs[i] = r.Err
	}
	return errs
}

// AgentCheck is the outcome of building one agent for "agent validate".
type AgentCheck struct {
	Name string
	// Err is why the agent does not load; nil for a good agent.
	Err error
	// Warnings are the agent's warnings (agents.Agent.Warnings, with the
	// data dir's directives): it loads, but something is odd.
	Warnings []string
	// Heartbeat summarizes the agent's heartbeat; "" when it has none.
	Heartbeat string
}

// CheckAgents is ValidateAgents with each good agent's warnings and
// heartbeat: lite/agentcache builds the agents, the heartbeats' check
// reads what they would schedule.
func CheckAgents(cfg *config.Config, names []string, log *slog.Logger) []AgentCheck {
	checks := agentcache.CheckAgents(cfg, names, log)
	out := make([]AgentCheck, len(checks))
	for i, r := range checks {
		out[i] = AgentCheck{Name: r.Name, Err: r.Err}
		if r.Err == nil {
			out[i].Warnings = r.Spec.Warnings
			hb, warnings := autonomy.HeartbeatCheck(cfg, r.Spec)
			out[i].Heartbeat, out[i].Warnings = hb, append(slices.Clip(out[i].Warnings), warnings...)
		}
	}
	return out
}
