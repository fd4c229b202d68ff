package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite"
)

func runInit(g *globals, args []string) error {
	fs := g.flags("init")
	var m initModel
	fs.StringVar(&m.Provider, "provider", "", "the default agent's provider: "+initProviders)
	fs.StringVar(&m.Name, "model", "", "the default agent's model (e.g. qwen3:1.7b, gpt-4o-mini)")
	fs.StringVar(&m.BaseURL, "base-url", "", "the provider's URL (e.g. http://192.168.1.10:11434 for Ollama on another machine)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("takes at most one directory")
	}
	if fs.NArg() == 1 {
		g.dataDir = fs.Arg(0)
	}
	flagged := m != initModel{}
	if flagged {
		if err := m.validate(); err != nil {
			return usagef("%s", err)
		}
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	agentFile := filepath.Join(cfg.AgentsDir, cfg.Runtime.DefaultAgent, agents.FileName)
	fresh := !fileExists(agentFile)
	if flagged && !fresh {
		return fmt.Errorf("%s exists already: edit its spec.model, or init another data dir", agentFile)
	}
	if !flagged && fresh && g.stdinIsTTY() {
		if m, err = promptModel(g.stdin, g.stdout); err != nil {
			return err
		}
	}
	wrote, err := lite.Init(cfg)
	if err != nil {
		return err
	}
	if fresh && m != (initModel{}) {
		if err := m.apply(agentFile); err != nil {
			return err
		}
	}
	for _, w := range wrote {
		fmt.Fprintf(g.stdout, "wrote %s\n", w)
	}
	if len(wrote) == 0 {
		fmt.Fprintf(g.stdout, "%s is already set up\n", cfg.DataDir)
	}
	if fresh && g.stdinIsTTY() {
		checkModel(g, cfg)
	}
	fmt.Fprintf(g.stdout, "next: %s chat -d %s\n", g.progName(), cfg.DataDir)
	return nil
}

// checkModel probes the new agent's provider as doctor does and says what
// is missing, so the first message does not find it out.
func checkModel(g *globals, cfg *lite.Config) {
	if c := lite.ProbeAgent(context.Background(), cfg, ""); c != nil {
		fmt.Fprintf(g.stdout, "check: %s\n  fix: %s\n", c.Detail, c.Fix)
		return
	}
	fmt.Fprintf(g.stdout, "check: the default agent's model answers (or is hosted: agnx-lite doctor tells more)\n")
}

// ensureInit sets up the data dir on first start, so that `chat` and `run`
// work with nothing prepared.
func ensureInit(g *globals, cfg *lite.Config) error {
	list, err := agents.List(cfg.AgentsDir)
	if err != nil || len(list) > 0 {
		return err
	}
	wrote, err := lite.Init(cfg)
	if err != nil {
		return err
	}
	for _, w := range wrote {
		fmt.Fprintf(g.stderr, "first start: wrote %s\n", w)
	}
	return nil
}
