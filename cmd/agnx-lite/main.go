// Command agnx-lite is the CLI of agnx-lite: one file per command, flags and
// printing. The work itself happens in package lite and below.
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/systemd"
	"github.com/agnx-lite/agnx-lite/storage"
)

// version is stamped by the Makefile with -ldflags "-X main.version=...".
var version = "dev"

// command is one subcommand: its usage line and what it runs.
type command struct {
	usage string
	short string
	run   func(g *globals, args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"init":     {"init [DIR]", "write agnx.yaml and the default agent into the data dir", runInit},
		"chat":     {"chat [-a AGENT] [--session ID | -C] [-s URL]", "talk to an agent (streaming REPL)", runChat},
		"run":      {"run [-a AGENT] [-s URL] [--approve] -m MESSAGE", "send one message, print the answer", runRun},
		"serve":    {"serve [--host H] [-p PORT] [--agents-dir D] | serve status | stop | reload-agents", "run the daemon (HTTP API), or talk to the running one", runServe},
		"attach":   {"attach [ID] [-s URL] | --list", "follow a session: its history, then live events", runAttach},
		"session":  {"session list | show ID | delete ID | export ID [-o F|--dir D] | import PATH...", "inspect and manage sessions", runSession},
		"agent":    {"agent list | validate [NAME] | create NAME | export NAME | import FILE", "inspect, manage and move agents", runAgent},
		"service":  {serviceUsage, "run agnx-lite as a systemd service (boot, restart, watchdog)", runService},
		"doctor":   {"doctor [--format json]", "check the config, database, agents, providers and sandbox", runDoctor},
		"db":       {"db recover|compact", "recover: copy what is readable of a damaged database into a new one, in its place; compact: rewrite it without free pages (daemon stopped)", runDB},
		"tool":     {"tool run AGENT TOOL '{json}'", "run one of an agent's tools by hand", runTool},
		"memory":   {memoryUsage, "show, search and edit an agent's memory files", runMemory},
		"skill":    {"skill list [AGENT] | validate [AGENT|PATH]", "list agents' skills, or check SKILL.md files", runSkill},
		"schedule": {scheduleUsage, "list, show and cancel the schedules agents made", runSchedule},
		"usage":    {usageUsage, "tokens the models used and their estimated cost, by agent, model or day", runUsage},
		"mcp":      {mcpUsage, "list an agent's MCP servers and their tools, or test one (connect, list, call)", runMCP},
		"version":  {"version", "print the version", runVersion},
	}
}

// globals are the flags every command takes.
type globals struct {
	config  string
	dataDir string
	// agentsDir is --agents-dir: it wins over the config's agents_dir.
	agentsDir string
	verbose   int
	quiet     bool
	// envLoaded is set once agnx.env has been read (loadEnvFile).
	envLoaded bool
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
}

// exitError makes the program exit with code (after printing err).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks an error in how the command was called (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

func main() {
	bwrap.Init() // when started as a sandbox's init, become it
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	return runWith(&globals{stdin: os.Stdin, stdout: stdout, stderr: stderr}, args)
}

// runWith runs the command args names with g's standard streams.
func runWith(g *globals, args []string) int {
	stdout, stderr := g.stdout, g.stderr
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout, cmds)
		return 0
	}
	if args[0] == "--version" {
		args[0] = "version"
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "agnx-lite: unknown command %q: run \"agnx-lite help\" for the list\n", args[0])
		return 2
	}
	err := c.run(g, args[1:])
	var ue *usageError
	var ee *exitError
	var ce *storage.CorruptError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, pflag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "agnx-lite %s: %s\nusage: agnx-lite %s\n", args[0], ue.msg, c.usage)
		return 2
	case errors.As(err, &ce):
		// The same sentence from every command, however it was wrapped;
		// systemd's RestartPreventExitStatus: restarting cannot fix it.
		fmt.Fprintf(stderr, "agnx-lite: %s\n", ce)
		return systemd.ExitConfig
	case errors.As(err, &ee):
		fmt.Fprintf(stderr, "agnx-lite: %s\n", err)
		return ee.code
	default:
		fmt.Fprintf(stderr, "agnx-lite: %s\n", err)
		return 1
	}
}

func printUsage(w io.Writer, cmds map[string]command) {
	fmt.Fprintf(w, "agnx-lite %s: a personal AI-agent runtime for small hardware\n\nCommands:\n", version)
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-50s %s\n", cmds[n].usage, cmds[n].short)
	}
	fmt.Fprint(w, "\nGlobal flags: -c FILE (agnx.yaml or duragent.yaml), -d/--data-dir DIR (default ~/.agnx-lite or $AGNX_LITE_HOME), --agents-dir DIR, -v/-vv, -q\n")
}

// flags returns a flag set with the global flags registered.
func (g *globals) flags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(g.stderr)
	fs.StringVarP(&g.config, "config", "c", "", "path to agnx.yaml, or to Agnx's duragent.yaml (workspace .duragent beside it)")
	fs.StringVarP(&g.dataDir, "data-dir", "d", "", "data directory (default ~/.agnx-lite, or $AGNX_LITE_HOME)")
	fs.StringVar(&g.agentsDir, "agents-dir", "", "folder of agents (default agents_dir, or <data-dir>/agents)")
	fs.CountVarP(&g.verbose, "verbose", "v", "more log output (-vv for debug)")
	fs.BoolVarP(&g.quiet, "quiet", "q", false, "only errors")
	return fs
}

// parse parses args, turning flag errors into usage errors.
func parse(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usagef("%s", err)
	}
	return nil
}

// config finds and validates the configuration.
func (g *globals) cfg() (*lite.Config, error) {
	if err := g.loadEnvFile(); err != nil {
		return nil, err
	}
	cfg, err := lite.Locate(g.config, g.dataDir)
	if err == nil && g.agentsDir != "" {
		cfg.AgentsDir = g.agentsDir
	}
	return cfg, err
}

// logger writes JSON logs to stderr. The CLI logs nothing unless asked
// with -v: what the user must know is printed as one sentence.
func (g *globals) logger() *slog.Logger {
	level := slog.LevelError + 4
	switch {
	case g.quiet:
	case g.verbose == 1:
		level = slog.LevelInfo
	case g.verbose >= 2:
		level = slog.LevelDebug
	}
	return slog.New(slog.NewJSONHandler(g.stderr, &slog.HandlerOptions{Level: level}))
}

// stdinIsTerminal reports whether standard input is a terminal.
func (g *globals) stdinIsTerminal() bool {
	f, ok := g.stdin.(*os.File)
	return ok && isTerminal(f)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
