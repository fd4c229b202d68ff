package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

func runAgent(g *globals, args []string) error {
	fs := g.flags("agent")
	long := fs.BoolP("long", "l", false, "list: also read each agent's model and description")
	withSessions := fs.Bool("with-sessions", false, "export: include the agent's sessions")
	out := fs.StringP("output", "o", "", "export: write to this file instead of standard output")
	server := fs.StringP("server", "s", "", "export: the daemon's URL (default: the running one, if any)")
	force := fs.Bool("force", false, "import: replace an agent of the same name")
	trust := fs.Bool("trust", false, "import: install an agent that runs executables, asks for network or sends a provider key to another server")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("say what to do: list, validate, create, export or import")
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	sub, rest := fs.Arg(0), fs.Args()[1:]
	switch sub {
	case "list":
		return listAgents(g, cfg.AgentsDir, *long)
	case "validate":
		return validateAgents(g, cfg, rest)
	case "create":
		if len(rest) != 1 {
			return usagef("create needs one agent name")
		}
		dir, err := agents.WriteTemplate(cfg.AgentsDir, rest[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "created %s: edit its agent.yaml and SOUL.md, then: agnx-lite chat -a %s\n", dir, rest[0])
		return nil
	case "export":
		if len(rest) != 1 {
			return usagef("export needs one agent name")
		}
		return exportAgent(g, cfg, rest[0], exportFlags{out: *out, server: *server, sessions: *withSessions})
	case "import":
		if len(rest) != 1 {
			return usagef("import needs one archive file (- for standard input)")
		}
		return importAgent(g, cfg, rest[0], agents.ImportOptions{Force: *force, Trust: *trust})
	}
	return usagef("unknown subcommand %q", sub)
}

func listAgents(g *globals, dir string, long bool) error {
	list, err := agents.List(dir)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintf(g.stdout, "no agents in %s: run \"agnx-lite init\" or \"agnx-lite agent create NAME\"\n", dir)
		return nil
	}
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	if !long {
		fmt.Fprintln(w, "NAME\tMODIFIED")
		for _, e := range list {
			fmt.Fprintf(w, "%s\t%s\n", e.Name, e.ModTime.Local().Format(time.DateTime))
		}
		return w.Flush()
	}
	fmt.Fprintln(w, "NAME\tPROVIDER\tMODEL\tDESCRIPTION")
	for _, e := range list {
		a, err := agents.Load(e.Dir)
		if err != nil {
			fmt.Fprintf(w, "%s\t-\t-\tinvalid: %s\n", e.Name, err)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", e.Name, a.Model.Provider, a.Model.Name, oneLine(a.Description))
	}
	return w.Flush()
}

// validateAgents builds the named agents (all when none is named) as the
// daemon would and prints ok or the file:line error of each; it fails if
// any is invalid.
func validateAgents(g *globals, cfg *config.Config, names []string) error {
	dir := cfg.AgentsDir
	if len(names) == 0 {
		list, err := agents.List(dir)
		if err != nil {
			return err
		}
		for _, e := range list {
			names = append(names, e.Name)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("no agents in %s: run \"agnx-lite init\"", dir)
	}
	bad := 0
	for _, r := range lite.CheckAgents(cfg, names, g.logger()) {
		if r.Err != nil {
			bad++
			fmt.Fprintf(g.stdout, "FAIL  %s\n", r.Err)
			continue
		}
		if len(r.Warnings) == 0 {
			fmt.Fprintf(g.stdout, "ok    %s\n", r.Name)
			printHeartbeat(g, r)
			continue
		}
		plural := "s"
		if len(r.Warnings) == 1 {
			plural = ""
		}
		fmt.Fprintf(g.stdout, "ok    %s (%d warning%s)\n", r.Name, len(r.Warnings), plural)
		printHeartbeat(g, r)
		for _, w := range r.Warnings {
			fmt.Fprintf(g.stdout, "warn  %s\n", w)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d agents are invalid", bad, len(names))
	}
	return nil
}

// printHeartbeat prints the summary of a good agent's heartbeat.
func printHeartbeat(g *globals, r lite.AgentCheck) {
	if r.Heartbeat != "" {
		fmt.Fprintf(g.stdout, "beat  %s: heartbeat %s\n", r.Name, r.Heartbeat)
	}
}
