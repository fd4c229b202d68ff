package autonomy

import (
	"slices"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

// HeartbeatCheck is what "agent validate" says of an agent's heartbeat:
// a one-line summary ("" for none) and warnings. A heartbeat with no
// deliver_to goes where spec.notify says (nowhere with when: never), by
// default to the chat the agent last talked with through a gateway; when
// no gateway is on, or no route (nor the fallback) leads a chat to the
// agent, it can have none, and what the heartbeat says is only logged.
func HeartbeatCheck(cfg *config.Config, spec *agents.Agent) (summary string, warnings []string) {
	hb := spec.Heartbeat
	if hb == nil {
		return "", nil
	}
	summary = hb.Summary()
	switch {
	case hb.DeliverTo != nil:
		return summary, nil
	case spec.Notify.When == agents.NotifyNever:
		return summary, []string{"spec.notify.when is never, so what the heartbeat says is dropped; set spec.heartbeat.deliver_to {gateway, chat_id} to send it to a chat"}
	case slices.ContainsFunc(spec.Notify.Deliveries, func(d agents.Delivery) bool { return d.Type != "log" && (d.Type != "chat" || d.Gateway != "") }):
		return summary, nil // a webhook, ntfy or a named chat
	}
	routed := cfg.RouteFallback == spec.Name ||
		slices.ContainsFunc(cfg.Routes, func(r config.Route) bool { return r.Agent == spec.Name })
	if !cfg.GatewaysOn() || !routed {
		warnings = append(warnings, "the heartbeat has no delivery target: no gateway chat is routed to "+spec.Name+
			", so what it says is only logged; set spec.heartbeat.deliver_to {gateway, chat_id} or route a chat to it")
	}
	return summary, warnings
}
