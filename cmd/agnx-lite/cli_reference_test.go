package main

import (
	"github.com/agnx-lite/agnx-lite/ci/golden"

	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// docs/reference/cli.md is generated from the code: the command table
// (commands) and the flag sets the commands build (flagSets, as help and
// completions read them). The test fails when the page is stale; -update
// rewrites it.
func TestCLIReference(t *testing.T) {
	golden.Check(t, filepath.Join("..", "..", "docs", "reference", "cli.md"), cliReference(t),
		"go test ./cmd/agnx-lite -run TestCLIReference -update")
}

func cliReference(t *testing.T) string {
	var b strings.Builder
	b.WriteString("# Command line\n\n" +
		"Generated from the code by `make docs`; do not edit.\n" +
		"The commands come from the command table (`commands` in cmd/agnx-lite/main.go), " +
		"their flags from the flag sets they build, as `agnx-lite help COMMAND` prints them.\n\n" +
		"    agnx-lite [global flags] COMMAND [flags] [arguments]\n\n" +
		"| command | what it does |\n| --- | --- |\n")
	cmds := commands()
	names := slices.Sorted(maps.Keys(cmds))
	for _, n := range names {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s |\n", n, n, cell(cmds[n].short))
	}
	gfs := pflag.NewFlagSet("", pflag.ContinueOnError)
	(&globals{}).addGlobals(gfs)
	b.WriteString("\n## Global flags\n\nEvery command takes them, before or after its name.\n\n")
	writeFlags(&b, gfs, nil)
	global := map[string]bool{}
	gfs.VisitAll(func(f *pflag.Flag) { global[f.Name] = true })
	for _, n := range names {
		writeCommand(t, &b, n, cmds[n], global)
	}
	return b.String()
}

// writeCommand writes one command's section: what it does, its usage, an
// example, and a table of its own flags for each flag set it builds (a
// command whose subcommands have flags of their own builds one each).
func writeCommand(t *testing.T, b *strings.Builder, name string, c command, global map[string]bool) {
	fmt.Fprintf(b, "\n## %s\n\n%s.\n\n    agnx-lite %s\n\nExample:\n\n    %s\n", name, upperFirst(c.short), c.usage, c.example)
	if c.run == nil {
		return
	}
	var order []string
	sets := map[string]*pflag.FlagSet{}
	for _, fs := range flagSets(name, c) {
		if _, ok := sets[fs.Name()]; !ok {
			order = append(order, fs.Name())
		}
		sets[fs.Name()] = fs
	}
	require.NotEmpty(t, order, "%s builds no flag set: it must parse its flags with g.flags", name)
	for _, set := range order {
		fs := sets[set]
		own := 0
		fs.VisitAll(func(f *pflag.Flag) {
			if !global[f.Name] {
				own++
			}
		})
		if own == 0 {
			continue
		}
		if set != name {
			fmt.Fprintf(b, "\n### %s\n", set)
		}
		b.WriteString("\n")
		writeFlags(b, fs, global)
	}
}

// writeFlags writes a table of fs's flags, leaving out those in skip.
func writeFlags(b *strings.Builder, fs *pflag.FlagSet, skip map[string]bool) {
	b.WriteString("| flag | type | default | what it does |\n| --- | --- | --- | --- |\n")
	fs.VisitAll(func(f *pflag.Flag) {
		if skip[f.Name] {
			return
		}
		spell := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			spell = "`-" + f.Shorthand + "`, " + spell
		}
		_, usage := pflag.UnquoteUsage(f)
		def := "—"
		if f.DefValue != "" && f.DefValue != "[]" {
			def = "`" + symbolic(f.DefValue) + "`"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", spell, f.Value.Type(), def, cell(symbolic(usage)))
	})
}

// symbolic replaces what depends on the machine the page is generated on
// (the home directory, the host name) with a name for it.
func symbolic(s string) string {
	if home, err := os.UserHomeDir(); err == nil && len(home) > 1 {
		s = strings.ReplaceAll(s, home, "~")
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		s = strings.ReplaceAll(s, host, "<host name>")
	}
	return s
}

// cell makes s fit in a Markdown table cell, where <id> would be taken
// for HTML.
func cell(s string) string {
	return strings.NewReplacer("\n", " ", "|", `\|`, "<", "&lt;", ">", "&gt;").Replace(s)
}
