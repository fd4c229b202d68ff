package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

func runSession(g *globals, args []string) error {
	fs := g.flags("session")
	out := fs.StringP("output", "o", "", "export: write to this file instead of standard output")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("say what to do: list, show, delete or export")
	}
	sub, rest := fs.Arg(0), fs.Args()[1:]
	needID := sub == "show" || sub == "delete" || sub == "export"
	if needID && len(rest) != 1 {
		return usagef("%s needs one session id", sub)
	}
	switch sub {
	case "list":
		return withStore(g, func(st *storage.Store) error { return listSessions(g, st) })
	case "show":
		return withStore(g, func(st *storage.Store) error { return showSession(g, st, rest[0]) })
	case "export":
		return withStore(g, func(st *storage.Store) error { return exportSession(g, st, rest[0], *out) })
	case "delete":
		return deleteSession(g, rest[0])
	}
	return usagef("unknown subcommand %q", sub)
}

// withStore opens the database for reading only.
func withStore(g *globals, fn func(*storage.Store) error) error {
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	if _, err := os.Stat(cfg.DBPath()); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no sessions yet in %s: start one with \"agnx-lite chat\"", cfg.DataDir)
	}
	st, err := storage.Open(cfg.DBPath(), &storage.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

func listSessions(g *globals, st *storage.Store) error {
	list, err := runtime.ListSessions(st)
	if err != nil {
		return err
	}
	return printSessions(g, list)
}

// printSessions prints sessions as a table, most recent first.
func printSessions(g *globals, list []runtime.SessionInfo) error {
	if len(list) == 0 {
		fmt.Fprintln(g.stdout, "no sessions yet: start one with \"agnx-lite chat\"")
		return nil
	}
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tAGENT\tGATEWAY\tSTATUS\tTURNS\tUPDATED\tFIRST MESSAGE")
	for _, s := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", s.ID, s.Agent, s.Gateway, s.Status, s.Turns,
			s.Updated.Local().Format(time.DateTime), oneLine(s.Preview))
	}
	return w.Flush()
}

func showSession(g *globals, st *storage.Store, id string) error {
	info, err := runtime.ReadSession(st, id)
	if err != nil {
		return notFound(err, id)
	}
	fmt.Fprintf(g.stdout, "session %s · agent %s · %s · created %s\n\n", info.ID, info.Agent, info.Status,
		info.Created.Local().Format(time.DateTime))
	return runtime.ReadEvents(st, id, 0, func(e runtime.Event) error {
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
			fmt.Fprintf(g.stdout, "  error: %s\n", e.Content)
		case runtime.EvTurnEnd:
			if e.Reason != runtime.TurnCompleted {
				fmt.Fprintf(g.stdout, "  (turn %s)\n", e.Reason)
			}
			fmt.Fprintln(g.stdout)
		}
		return nil
	})
}

// exportSession writes the session's events as JSON Lines, Agnx's
// events.jsonl form.
func exportSession(g *globals, st *storage.Store, id, path string) error {
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
	err := runtime.ReadEvents(st, id, 0, func(e runtime.Event) error {
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

func deleteSession(g *globals, id string) error {
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	app, err := lite.Open(cfg, &lite.Options{Logger: g.logger()})
	if err != nil {
		return err
	}
	defer app.Close()
	if err := app.Loop.DeleteSession(context.Background(), id); err != nil {
		return notFound(err, id)
	}
	fmt.Fprintf(g.stdout, "deleted session %s\n", id)
	return nil
}

func notFound(err error, id string) error {
	if errors.Is(err, runtime.ErrSessionNotFound) {
		return fmt.Errorf("no session %s: list them with \"agnx-lite session list\"", id)
	}
	return err
}
