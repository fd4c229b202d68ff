// Command agnx-lite is the CLI of agnx-lite: one file per command, flags and
// printing. The work itself happens in package lite and below.
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/systemd"
	"github.com/agnx-lite/agnx-lite/storage"
)

// version is stamped by the Makefile with -ldflags "-X main.version=...".
var version = "dev"

// command is one subcommand: its usage line, a line of purpose, an
// example, the words that may follow it (for completions) and what it runs.
type command struct {
	usage   string
	short   string
	example string
	subs    []string
	run     func(g *globals, args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"init": {"init [DIR] [--provider P --model M [--base-url U]]", "write agnx.yaml and the default agent into the data dir",
			"agnx-lite init -d ~/.agnx-lite", nil, runInit},
		"chat": {"chat [-a AGENT] [--session ID | -C] [-s URL]", "talk to an agent (streaming REPL)",
			"agnx-lite chat -a assistant", nil, runChat},
		"run": {"run [-a AGENT] [-s URL] [--approve] -m MESSAGE", "send one message, print the answer",
			`agnx-lite run -m "what is the time in Tokyo?"`, nil, runRun},
		"acp": {"acp [-a AGENT] [-s URL]", "serve an agent to an editor (Zed, ...) over ACP on stdin/stdout",
			"agnx-lite acp -a assistant", nil, runACP},
		"serve": {"serve [--host H] [-p PORT] [--agents-dir D] | serve status | stop | reload-agents", "run the daemon (HTTP API), or talk to the running one",
			"agnx-lite serve --host 0.0.0.0 -p 8080", []string{"status", "stop", "reload-agents"}, runServe},
		"attach": {"attach [ID] [-s URL] | --list", "follow a session: its history, then live events",
			"agnx-lite attach --list", nil, runAttach},
		"session": {"session list | show ID | end ID | delete ID | export ID [-o F|--dir D] | import PATH...", "inspect and manage sessions",
			"agnx-lite session export 01J... -o chat.jsonl", []string{"list", "show", "delete", "export", "import"}, runSession},
		"agent": {"agent list | validate [NAME] | create NAME | export NAME | import FILE", "inspect, manage and move agents",
			"agnx-lite agent create helper", []string{"list", "validate", "create", "export", "import"}, runAgent},
		"service": {serviceUsage, "run agnx-lite as a systemd service (boot, restart, watchdog)",
			"sudo agnx-lite service install --dry-run", []string{"install", "uninstall", "status"}, runService},
		"doctor": {"doctor [--format json]", "check the config, database, agents, providers and sandbox",
			"agnx-lite doctor --format json", nil, runDoctor},
		"db": {"db recover|compact", "recover a damaged database, or compact it (daemon stopped)",
			"agnx-lite db compact", []string{"recover", "compact"}, runDB},
		"tool": {"tool run AGENT TOOL '{json}'", "run one of an agent's tools by hand",
			`agnx-lite tool run assistant read_file '{"path": "notes.md"}'`, []string{"run"}, runTool},
		"memory": {memoryUsage, "show, search and edit an agent's memory files",
			"agnx-lite memory search assistant birthday", []string{"show", "search", "edit"}, runMemory},
		"skill": {"skill list [AGENT] | validate [AGENT|PATH]", "list agents' skills, or check SKILL.md files",
			"agnx-lite skill validate ./my-skill", []string{"list", "validate"}, runSkill},
		"schedule": {scheduleUsage, "list, show and cancel the schedules agents made",
			"agnx-lite schedule list --all", []string{"list", "show", "cancel"}, runSchedule},
		"task": {taskUsage, "add, list, show, move and assign the tasks of the task boards",
			`agnx-lite task add "write the report" -p high -a writer --after T-1`, []string{"add", "list", "show", "move", "assign"}, runTask},
		"usage": {usageUsage, "tokens the models used and their estimated cost, by agent, model or day",
			"agnx-lite usage --by day --since 7d", nil, runUsage},
		"mcp": {mcpUsage, "list an agent's MCP servers and their tools, or test one (connect, list, call)",
			"agnx-lite mcp test assistant", []string{"list", "test"}, runMCP},
		"model": {modelUsage, "download a model into Ollama, with its progress",
			"agnx-lite model pull qwen3:1.7b", []string{"pull"}, runModel},
		"completions": {"completions bash|zsh|fish", "print a shell completion script",
			"source <(agnx-lite completions bash)", []string{"bash", "zsh", "fish"}, runCompletions},
		"help": {"help [COMMAND]", "show the commands, or one command's flags and an example",
			"agnx-lite help chat", nil, nil},
		"version": {"version", "print the version", "agnx-lite version", nil, runVersion},
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
	// command is the command being run, for its help page.
	command string
	// prog is how the program was started (bin/agnx-lite), for the hints
	// it prints; empty: agnx-lite.
	prog string
	// plainWarnings prints start-up warnings as plain lines even when
	// standard error is not a terminal (tests).
	plainWarnings bool
	// onFlags, when set, is told of each flag set a command builds, before
	// it parses (completions read the commands' flags this way).
	onFlags func(*pflag.FlagSet)
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
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
	return runWith(&globals{stdin: os.Stdin, stdout: stdout, stderr: stderr, prog: os.Args[0]}, args)
}

// runWith runs the command args names with g's standard streams. Global
// flags may come before the command as well as after it.
func runWith(g *globals, args []string) int {
	stdout, stderr := g.stdout, g.stderr
	cmds := commands()
	args, err := g.parseLeading(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "agnx-lite: %s: run \"agnx-lite help\" for the flags\n", err)
		return 2
	}
	if len(args) == 0 || args[0] == "help" && (len(args) == 1 || args[1] == "help") {
		printUsage(stdout, g, cmds)
		return 0
	}
	if args[0] == "help" {
		args = []string{args[1], "--help"}
	}
	c, ok := cmds[args[0]]
	if !ok || c.run == nil {
		fmt.Fprintf(stderr, "agnx-lite: unknown command %q: run \"agnx-lite help\" for the list\n", args[0])
		return 2
	}
	g.command = args[0]
	err = c.run(g, args[1:])
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

// progName is the program as the user can run it again: the path it was
// started by when that has a folder in it (bin/agnx-lite, as make run
// does), else agnx-lite, found on $PATH.
func (g *globals) progName() string {
	if strings.ContainsRune(g.prog, '/') {
		return g.prog
	}
	return "agnx-lite"
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
func (g *globals) cfg() (*config.Config, error) {
	if err := g.loadEnvFile(); err != nil {
		return nil, err
	}
	cfg, err := config.Locate(g.config, g.dataDir)
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

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
