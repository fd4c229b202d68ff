package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agnx-lite/agnx-lite/lite/agentcache"
)

// runTool runs one tool of an agent by hand, as the model would call it,
// with the agent's sandbox and limits; its policy does not apply.
func runTool(g *globals, args []string) error {
	fs := g.flags("tool")
	details := fs.Bool("details", false, "also print the structured details")
	if err := parse(fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) < 3 || rest[0] != "run" {
		return usagef("say: tool run AGENT TOOL '{\"json\": \"arguments\"}'")
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	a, closeTools, err := agentcache.LoadAgentTools(cfg, rest[1], g.logger(), g.progress())
	if err != nil {
		return err
	}
	defer closeTools()
	var names []string
	for _, t := range a.Tools {
		names = append(names, t.Spec().Name)
		if t.Spec().Name != rest[2] {
			continue
		}
		res, err := t.Run(context.Background(), []byte(strings.Join(rest[3:], " ")))
		if err != nil {
			return err
		}
		fmt.Fprintln(g.stdout, res.Content)
		if *details && len(res.Details) > 0 {
			fmt.Fprintf(g.stdout, "details: %s\n", res.Details)
		}
		if res.IsError {
			return fmt.Errorf("the tool reported a failure")
		}
		return nil
	}
	return fmt.Errorf("agent %s has no tool %q (it has: %s)", rest[1], rest[2], strings.Join(names, ", "))
}
