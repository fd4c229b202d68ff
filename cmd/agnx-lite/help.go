package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// addGlobals registers the global flags on fs without resetting what an
// earlier parse (flags before the command) set: pflag stores a flag's
// default in its variable when the flag is registered.
func (g *globals) addGlobals(fs *pflag.FlagSet) {
	cfg, dir, agentsDir, verbose, quiet := g.config, g.dataDir, g.agentsDir, g.verbose, g.quiet
	fs.StringVarP(&g.config, "config", "c", "", "path to agnx.yaml, or to Agnx's duragent.yaml (workspace .duragent beside it)")
	fs.StringVarP(&g.dataDir, "data-dir", "d", "", "data directory (default ~/.agnx-lite, or $AGNX_LITE_HOME)")
	fs.StringVar(&g.agentsDir, "agents-dir", "", "folder of agents (default agents_dir, or <data-dir>/agents)")
	fs.CountVarP(&g.verbose, "verbose", "v", "more log output (-vv for debug)")
	fs.BoolVarP(&g.quiet, "quiet", "q", false, "only errors")
	g.config, g.dataDir, g.agentsDir, g.verbose, g.quiet = cfg, dir, agentsDir, verbose, quiet
}

// flags returns a flag set with the global flags registered; its help
// (-h, --help, help CMD) goes to standard output.
func (g *globals) flags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(g.stderr)
	g.addGlobals(fs)
	fs.Usage = func() { g.printCommandHelp(fs) }
	if g.onFlags != nil {
		g.onFlags(fs)
	}
	return fs
}

// parseLeading parses the global flags before the command and returns the
// command and what follows it.
func (g *globals) parseLeading(args []string) ([]string, error) {
	fs := pflag.NewFlagSet("agnx-lite", pflag.ContinueOnError)
	fs.SetOutput(g.stderr)
	fs.SetInterspersed(false)
	g.addGlobals(fs)
	showVersion := fs.Bool("version", false, "print the version")
	fs.Usage = func() { printUsage(g.stdout, g, commands()) }
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *showVersion {
		return []string{"version"}, nil
	}
	return fs.Args(), nil
}

// globalFlagUsages are the global flags' help lines.
func (g *globals) globalFlagUsages() string {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	(&globals{}).addGlobals(fs)
	return fs.FlagUsages()
}

// printUsage prints the list of commands, one line each, aligned.
func printUsage(w io.Writer, g *globals, cmds map[string]command) {
	fmt.Fprintf(w, "agnx-lite %s: a personal AI-agent runtime for small hardware\n\n", version)
	fmt.Fprintf(w, "Usage: agnx-lite [global flags] COMMAND [flags] [arguments]\n\nCommands:\n")
	names := make([]string, 0, len(cmds))
	width := 0
	for n := range cmds {
		names = append(names, n)
		width = max(width, len(n))
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, cmds[n].short)
	}
	fmt.Fprintf(w, "\nGlobal flags (before or after the command):\n%s", g.globalFlagUsages())
	fmt.Fprintf(w, "\nRun \"agnx-lite help COMMAND\" for a command's flags and an example.\n")
}

// printCommandHelp prints one command's help: usage, purpose, example and
// flags.
func (g *globals) printCommandHelp(fs *pflag.FlagSet) {
	w := g.stdout
	name := g.command
	if name == "" {
		name, _, _ = strings.Cut(fs.Name(), " ")
	}
	c, ok := commands()[name]
	if !ok {
		fmt.Fprintf(w, "Flags:\n%s", fs.FlagUsages())
		return
	}
	fmt.Fprintf(w, "%s\n\nUsage: agnx-lite %s\n\nExample:\n  %s\n\nFlags:\n%s", upperFirst(c.short), c.usage, c.example, fs.FlagUsages())
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
