package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

func runSession(g *globals, args []string) error {
	fs := g.flags("session")
	out := fs.StringP("output", "o", "", "export: write events.jsonl to this file instead of standard output")
	dir := fs.String("dir", "", "export: write Agnx's session folder DIR/<id>/ (events.jsonl, state.json); DIR is Agnx's {workspace}/sessions")
	format := fs.String("format", "agnx", "export: agnx (Agnx's events.jsonl) or lite (agnx-lite's own log, with turn_end and tool_call lines)")
	server := fs.StringP("server", "s", "", "the daemon's URL (default: the running one, if any)")
	asJSON := fs.Bool("json", false, "list: print JSON (a flat list; a subagent's session has parent_id) instead of a tree")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("say what to do: list, show, end, delete, export or import")
	}
	sub, rest := fs.Arg(0), fs.Args()[1:]
	if sub == "import" {
		return importSessionPaths(g, *server, rest)
	}
	if *format != "agnx" && *format != "lite" || *format == "lite" && *dir != "" {
		return usagef("--format is agnx or lite, and --dir writes Agnx's format only")
	}
	needID := sub == "show" || sub == "end" || sub == "delete" || sub == "export"
	if needID && len(rest) != 1 {
		return usagef("%s needs one session id", sub)
	}
	switch sub {
	case "list", "show", "export", "end", "delete":
	default:
		return usagef("unknown subcommand %q", sub)
	}
	src, err := openSessions(g, *server, sub == "delete" || sub == "end")
	if err != nil {
		return err
	}
	defer src.close()
	switch sub {
	case "list":
		list, err := src.list()
		if err != nil {
			return err
		}
		return printSessions(g, list, *asJSON)
	case "show":
		return showSession(g, src, rest[0])
	case "export":
		if *dir != "" {
			return exportSessionDir(g, src, rest[0], *dir)
		}
		return exportSession(g, src, rest[0], *out, *format == "lite")
	case "end":
		if err := src.end(rest[0]); err != nil {
			return notFound(err, rest[0])
		}
		fmt.Fprintf(g.stdout, "ended session %s (its log is kept; a chat's next message starts a new one)\n", rest[0])
		return nil
	}
	if err := src.delete(rest[0]); err != nil {
		return notFound(err, rest[0])
	}
	fmt.Fprintf(g.stdout, "deleted session %s\n", rest[0])
	return nil
}

// sessionSource is where the session commands read: the running daemon
// (which holds the database), or the database itself.
type sessionSource struct {
	list   func() ([]runtime.SessionInfo, error)
	info   func(id string) (runtime.SessionInfo, error)
	events func(id string, fn func(runtime.Event) error) error
	delete func(id string) error
	end    func(id string) error
	close  func()
}

func openSessions(g *globals, server string, write bool) (*sessionSource, error) {
	cfg, err := g.cfg()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if url := findDaemon(cfg, server); url != "" {
		c := newClient(cfg, url)
		return &sessionSource{
			list:   func() ([]runtime.SessionInfo, error) { return c.Sessions(ctx) },
			info:   func(id string) (runtime.SessionInfo, error) { return c.Session(ctx, id) },
			events: func(id string, fn func(runtime.Event) error) error { return c.Export(ctx, id, fn) },
			delete: func(id string) error { return c.DeleteSession(ctx, id) },
			end:    func(id string) error { return c.EndSession(ctx, id) },
			close:  func() {},
		}, nil
	}
	if _, err := os.Stat(cfg.DBPath()); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no sessions yet in %s: start one with \"agnx-lite chat\"", cfg.DataDir)
	}
	if write {
		app, err := lite.Open(cfg, &lite.Options{Logger: g.logger()})
		if err != nil {
			return nil, err
		}
		return &sessionSource{delete: func(id string) error { return app.Loop.DeleteSession(ctx, id) },
			end:   func(id string) error { return app.Loop.EndSession(ctx, id, runtime.EndCompleted) },
			close: func() { app.Close() }}, nil
	}
	st, err := storage.Open(cfg.DBPath(), &storage.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	return &sessionSource{
		list:   func() ([]runtime.SessionInfo, error) { return runtime.ListSessions(st) },
		info:   func(id string) (runtime.SessionInfo, error) { return runtime.ReadSession(st, id) },
		events: func(id string, fn func(runtime.Event) error) error { return runtime.ReadEvents(st, id, 0, fn) },
		close:  func() { st.Close() },
	}, nil
}

func showSession(g *globals, src *sessionSource, id string) error {
	info, err := src.info(id)
	if err != nil {
		return notFound(err, id)
	}
	fmt.Fprintf(g.stdout, "session %s · agent %s · %s · created %s\n\n", info.ID, info.Agent, info.Status,
		info.Created.Local().Format(time.DateTime))
	return src.events(id, func(e runtime.Event) error {
		switch e.Type {
		case runtime.EvUserMessage:
			fmt.Fprintf(g.stdout, "you> %s\n", e.Content)
		case runtime.EvAssistant:
			if e.Content != "" {
				fmt.Fprintf(g.stdout, "%s> %s\n", info.Agent, e.Content)
			}
		case runtime.EvToolCall:
			fmt.Fprintf(g.stdout, "  ⚙ %s %s\n", e.ToolName, oneLine(e.Arguments))
		case runtime.EvToolResult:
			fmt.Fprintf(g.stdout, "  ↳ %s\n", oneLine(e.Content))
		case runtime.EvError:
			label := "error"
			if runtime.Advisory(e.Code) {
				label = "note"
			}
			fmt.Fprintf(g.stdout, "  %s: %s\n", label, e.Content)
		case runtime.EvTurnEnd:
			if e.Reason != runtime.TurnCompleted {
				fmt.Fprintf(g.stdout, "  (turn %s)\n", e.Reason)
			}
			fmt.Fprintln(g.stdout)
		case runtime.EvSessionStart, runtime.EvApprovalRequired, runtime.EvApprovalDecision,
			runtime.EvToken, runtime.EvToolProgress,
			runtime.EvSessionEnd, runtime.EvSilentMessage, runtime.EvHistoryCompaction:
			// The header shows the start (and the status an end); approvals
			// show through the tool results they led to; tokens and progress
			// are not stored; silent messages are group chatter kept out of
			// the conversation, and a compaction changes what the model is
			// sent, not what was said.
		}
		return nil
	})
}

// exportSession writes the session's events as JSON Lines: Agnx's
// events.jsonl, or with native agnx-lite's own log.
func exportSession(g *globals, src *sessionSource, id, path string, native bool) error {
	w := bufio.NewWriter(g.stdout)
	var f *os.File
	if path != "" && path != "-" {
		var err error
		if f, err = os.Create(path); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		defer f.Close()
		w = bufio.NewWriter(f)
	}
	var buf []byte
	ax := runtime.NewAgnxWriter(w)
	err := src.events(id, func(e runtime.Event) error {
		if !native {
			return ax.Write(e)
		}
		buf = append(e.AppendJSON(buf[:0]), '\n')
		_, err := w.Write(buf)
		return err
	})
	if err != nil {
		return notFound(err, id)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if f != nil {
		return f.Close()
	}
	return nil
}

func notFound(err error, id string) error {
	if isSessionNotFound(err) {
		return fmt.Errorf("no session %s: list them with \"agnx-lite session list\"", id)
	}
	return err
}
