package main

import (
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// cmdFlag is one of a command's own flags, as a completion offers it.
type cmdFlag struct {
	long, short, usage string
	value              bool // takes a value (the next word)
}

// words are the flag's spellings: --long and -s.
func (f cmdFlag) words() []string {
	w := []string{"--" + f.long}
	if f.short != "" {
		w = append(w, "-"+f.short)
	}
	return w
}

// commandFlags lists each command's own flags, the global ones left out.
// They are read from the flag sets the commands build (flagSets), so they
// are declared once, where they are parsed.
func commandFlags(cmds map[string]command) map[string][]cmdFlag {
	global := map[string]bool{"help": true}
	gfs := pflag.NewFlagSet("", pflag.ContinueOnError)
	(&globals{}).addGlobals(gfs)
	gfs.VisitAll(func(f *pflag.Flag) { global[f.Name] = true })
	out := make(map[string][]cmdFlag, len(cmds))
	for name, c := range cmds {
		if c.run == nil {
			continue
		}
		seen := map[string]bool{}
		var flags []cmdFlag
		for _, fs := range flagSets(name, c) {
			fs.VisitAll(func(f *pflag.Flag) {
				if global[f.Name] || seen[f.Name] {
					return
				}
				seen[f.Name] = true
				usage, _, _ := strings.Cut(f.Usage, "\n")
				flags = append(flags, cmdFlag{long: f.Name, short: f.Shorthand, usage: usage,
					value: f.Value.Type() != "bool" && f.Value.Type() != "count" && f.NoOptDefVal == ""})
			})
		}
		sort.Slice(flags, func(i, j int) bool { return flags[i].long < flags[j].long })
		out[name] = flags
	}
	return out
}

// flagSets returns the flag sets command name builds, in order, complete:
// it runs with --help (and each subcommand with SUB --help, for the
// commands whose subcommands have flags of their own), its output
// discarded, and every command parses its flags before it does anything
// else.
func flagSets(name string, c command) []*pflag.FlagSet {
	var sets []*pflag.FlagSet
	g := &globals{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, command: name}
	g.onFlags = func(fs *pflag.FlagSet) { sets = append(sets, fs) }
	_ = c.run(g, []string{"--help"})
	for _, sub := range c.subs {
		_ = c.run(g, []string{sub, "--help"})
	}
	return sets
}

// flagWords joins the spellings of flags, for a completion's word list.
func flagWords(flags []cmdFlag, valueOnly bool) string {
	var w []string
	for _, f := range flags {
		if !valueOnly || f.value {
			w = append(w, f.words()...)
		}
	}
	return strings.Join(w, " ")
}
