package main

import (
	"fmt"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite"
)

func runInit(g *globals, args []string) error {
	fs := g.flags("init")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("takes at most one directory")
	}
	if fs.NArg() == 1 {
		g.dataDir = fs.Arg(0)
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	wrote, err := lite.Init(cfg)
	if err != nil {
		return err
	}
	for _, w := range wrote {
		fmt.Fprintf(g.stdout, "wrote %s\n", w)
	}
	if len(wrote) == 0 {
		fmt.Fprintf(g.stdout, "%s is already set up\n", cfg.DataDir)
	}
	fmt.Fprintf(g.stdout, "next: %s chat -d %s\n", g.progName(), cfg.DataDir)
	return nil
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
