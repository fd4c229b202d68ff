package lite

import (
	"slices"

	"github.com/agnx-lite/agnx-lite/agents"
)

// heartbeatCheck is what "agent validate" says of an agent's heartbeat:
// a one-line summary ("" for none) and warnings. A heartbeat with no
// deliver_to goes to the chat the agent last talked with through a
// gateway; when no gateway is on, or no route (nor the fallback) leads a
// chat to the agent, it can have none, and what the heartbeat says is
// only logged.
func heartbeatCheck(cfg *Config, spec *agents.Agent) (summary string, warnings []string) {
	hb := spec.Heartbeat
	if hb == nil {
		return "", nil
	}
	summary = hb.Summary()
	if hb.DeliverTo != nil {
		return summary, nil
	}
	routed := cfg.RouteFallback == spec.Name ||
		slices.ContainsFunc(cfg.Routes, func(r Route) bool { return r.Agent == spec.Name })
	if !cfg.gatewaysOn() || !routed {
		warnings = append(warnings, "the heartbeat has no delivery target: no gateway chat is routed to "+spec.Name+
			", so what it says is only logged; set spec.heartbeat.deliver_to {gateway, chat_id} or route a chat to it")
	}
	return summary, warnings
}
