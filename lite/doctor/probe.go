package doctor

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

// ProbeAgent asks the model server of the named agent (the default agent
// when name is empty) what doctor asks: does it answer, and does it have
// the agent's model. It returns nil when it does, or when it cannot tell
// (a hosted provider, or an agent that does not load: serve says so
// itself); else the failed check, whose Detail and Fix make one line that
// says what the agent needs and how to get it. It is bounded by doctor's
// probe timeout (3 s) and ctx.
func ProbeAgent(ctx context.Context, cfg *config.Config, name string) *Check {
	if name == "" {
		name = cfg.Runtime.DefaultAgent
	}
	if !agents.ValidName(name) {
		return nil
	}
	a, err := agents.Load(filepath.Join(cfg.AgentsDir, name))
	if err != nil {
		return nil
	}
	for _, c := range providerChecks(ctx, []*agents.Agent{a}) {
		if c.Status == "ok" {
			continue
		}
		c.Detail = fmt.Sprintf("agent %s needs %s (provider %s, model %s): %s", name, c.Name, a.Model.Provider, a.Model.Name, c.Detail)
		c.Fix += fmt.Sprintf(", or give it another provider (spec.model in %s)", filepath.Join(cfg.AgentsDir, name, "agent.yaml"))
		return &c
	}
	return nil
}
