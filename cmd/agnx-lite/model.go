package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

const modelUsage = "model pull [NAME] [-a AGENT] [--base-url URL]"

func runModel(g *globals, args []string) error {
	fs := g.flags("model")
	agent := fs.StringP("agent", "a", "", "pull: the model and Ollama of this agent (default: runtime.default_agent)")
	baseURL := fs.String("base-url", "", "pull: the Ollama to pull into (default: the agent's base_url, else $OLLAMA_HOST)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 || fs.Arg(0) != "pull" || fs.NArg() > 2 {
		return usagef("say: model pull [NAME]")
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	base, name, err := pullTarget(cfg, *agent, fs.Arg(1))
	if err != nil {
		return err
	}
	if *baseURL != "" {
		base = *baseURL
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return pullModels(ctx, g, base, []string{name})
}

// pullTarget is the Ollama URL ("" for the default) and the model to
// pull: name, else the agent's model, when the agent uses Ollama.
func pullTarget(cfg *config.Config, agent, name string) (base, model string, err error) {
	if agent == "" {
		agent = cfg.Runtime.DefaultAgent
	}
	a, lerr := agents.Load(filepath.Join(cfg.AgentsDir, agent))
	switch {
	case lerr == nil && a.Model.Provider == "ollama":
		base = a.Model.BaseURL
		if name == "" {
			name = a.Model.Name
		}
	case name == "" && lerr != nil:
		return "", "", fmt.Errorf("name the model to pull (agent %s does not load: %v)", agent, lerr)
	case name == "":
		return "", "", fmt.Errorf("agent %s uses provider %s, whose models are hosted: only Ollama's are pulled (name one to pull it anyway)",
			agent, a.Model.Provider)
	}
	return base, name, nil
}

// pullModels pulls each model through Ollama, with progress on standard
// error and a line per model pulled on standard output.
func pullModels(ctx context.Context, g *globals, base string, models []string) error {
	p := g.progress()
	for _, m := range models {
		err := agentcache.PullModel(ctx, base, m, p, nil)
		p.Done("")
		if err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "pulled %s\n", m)
	}
	return nil
}
