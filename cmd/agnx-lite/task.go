package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/tasks"
)

const taskUsage = "task add TITLE [-b BOARD] [-p PRIORITY] [-a AGENT] [--after T-1,T-2] [-D DESC] | list [-b B] [--status S] [-a A] | show ID | move ID STATUS | assign ID AGENT [--json]"

// taskTimeout bounds one task command.
const taskTimeout = 30 * time.Second

// taskFlags are the task command's flags; each subcommand reads its own.
type taskFlags struct {
	board, priority, agent, desc, status, startAt, comment string
	after                                                  []string
	asJSON                                                 bool
}

func taskFlagSet(g *globals) (*pflag.FlagSet, *taskFlags) {
	fs := g.flags("task")
	f := &taskFlags{}
	fs.StringVarP(&f.board, "board", "b", "", "the board (default: default; an id may also be written BOARD/T-3)")
	fs.StringVarP(&f.priority, "priority", "p", "", "add: low, medium (default), high or critical")
	fs.StringVarP(&f.agent, "agent", "a", "", "add: the agent to assign it to; list: only this agent's tasks")
	fs.StringSliceVar(&f.after, "after", nil, "add: ids of the tasks that must be done first (T-1,T-2)")
	fs.StringVarP(&f.desc, "desc", "D", "", "add: its description")
	fs.StringVar(&f.startAt, "start-at", "", "add: RFC 3339 time before which its agent is not started on it")
	fs.StringVar(&f.status, "status", "", "list: only tasks with this status (todo, in_progress, done, cancelled)")
	fs.StringVarP(&f.comment, "message", "m", "", "move, assign: a note for the task's history")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON instead of text")
	return fs, f
}

// runTask adds, lists, shows, moves and assigns the tasks of the task
// boards, through the running daemon or on the data dir here.
func runTask(g *globals, args []string) error {
	fs, f := taskFlagSet(g)
	if err := parse(fs, args); err != nil {
		return err
	}
	words := fs.Args()
	if err := checkTaskArgs(words, f); err != nil {
		return err
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), taskTimeout)
	defer cancel()
	b, done, err := openTasks(g, cfg)
	if err != nil {
		return err
	}
	defer done()
	if words[0] == "list" {
		return listTasks(ctx, g, b, f)
	}
	var t tasks.Task
	switch words[0] {
	case "add":
		in := httpapi.TaskInput{Board: f.board, Title: ptrTo(strings.Join(words[1:], " ")), Priority: optional(f.priority),
			Agent: optional(f.agent), Description: optional(f.desc), StartAt: optional(f.startAt)}
		if f.after != nil {
			in.After = &f.after
		}
		t, err = b.add(ctx, in)
	case "show":
		board, id := taskRef(f.board, words[1])
		t, err = b.get(ctx, board, id)
	case "move":
		board, id := taskRef(f.board, words[1])
		t, err = b.patch(ctx, board, id, httpapi.TaskInput{Status: words[2], Comment: f.comment})
	case "assign":
		board, id := taskRef(f.board, words[1])
		agent := words[2]
		if agent == "-" {
			agent = ""
		}
		t, err = b.patch(ctx, board, id, httpapi.TaskInput{Agent: &agent, Comment: f.comment})
	}
	if err != nil {
		return fmt.Errorf("task %s: %w", words[0], err)
	}
	if f.asJSON {
		return printJSON(g.stdout, t)
	}
	if words[0] == "show" {
		printTask(g.stdout, t)
		return nil
	}
	fmt.Fprintf(g.stdout, "%s/%s %s: %s\n", t.Board, t.ID, t.Status, taskLine(t))
	return nil
}

// checkTaskArgs checks the words and flags before anything is opened.
func checkTaskArgs(words []string, f *taskFlags) error {
	if len(words) == 0 {
		return usagef("say what to do: add TITLE, list, show ID, move ID STATUS or assign ID AGENT")
	}
	want := map[string]int{"list": 1, "show": 2, "move": 3, "assign": 3}
	switch sub := words[0]; {
	case sub == "add":
		if len(words) < 2 {
			return usagef("add needs a title: agnx-lite task add \"write the report\"")
		}
	case want[sub] == 0:
		return usagef("unknown subcommand %q: use add, list, show, move or assign", sub)
	case len(words) != want[sub]:
		return usagef("%s takes %s", sub, map[string]string{"list": "no words; pick with -b, --status and -a",
			"show": "one task id", "move": "a task id and a status", "assign": "a task id and an agent (- unassigns)"}[sub])
	}
	if f.agent != "" && !agents.ValidName(f.agent) {
		return usagef("--agent %q is not an agent name", f.agent)
	}
	if f.board != "" {
		if err := tasks.CheckBoard(f.board); err != nil {
			return usagef("%s", err)
		}
	}
	return nil
}

// taskRef reads BOARD/T-3 or T-3 (on board, else the default board).
func taskRef(board, ref string) (string, string) {
	if b, id, ok := strings.Cut(ref, "/"); ok {
		return b, id
	}
	if board == "" {
		board = tasks.DefaultBoard
	}
	return board, ref
}

func listTasks(ctx context.Context, g *globals, b taskBoard, f *taskFlags) error {
	filter := tasks.Filter{Board: f.board, Agent: f.agent}
	if f.status != "" {
		st, err := tasks.ParseStatus(f.status)
		if err != nil {
			return usagef("%s", err)
		}
		filter.Status = st
	}
	list, err := b.list(ctx, filter)
	if err != nil {
		return fmt.Errorf("list the tasks: %w", err)
	}
	for _, fe := range list.FileErrors {
		fmt.Fprintf(g.stderr, "warning: a person's edit is not applied until this is fixed: %s\n", fe)
	}
	if f.asJSON {
		list.Tasks = nonNil(list.Tasks)
		return printJSON(g.stdout, list)
	}
	if len(list.Tasks) == 0 {
		fmt.Fprintln(g.stdout, "no tasks: add one with agnx-lite task add TITLE")
		return nil
	}
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tSTATUS\tPRIORITY\tAGENT\tAFTER\tTITLE")
	for _, t := range list.Tasks {
		fmt.Fprintf(w, "%s/%s\t%s\t%s\t%s\t%s\t%s\n", t.Board, t.ID, t.Status, t.Priority, orDash(t.Assignee),
			orDash(strings.Join(t.DependsOn, ",")), clipLine(t.Title, 60))
	}
	return w.Flush()
}

func taskLine(t tasks.Task) string {
	s := fmt.Sprintf("%s (%s", clipLine(t.Title, 80), t.Priority)
	if t.Assignee != "" {
		s += ", " + t.Assignee
	}
	return s + ")"
}

func printTask(out io.Writer, t tasks.Task) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "id\t%s/%s\n", t.Board, t.ID)
	fmt.Fprintf(w, "title\t%s\n", t.Title)
	fmt.Fprintf(w, "status\t%s\n", t.Status)
	fmt.Fprintf(w, "priority\t%s\n", t.Priority)
	fmt.Fprintf(w, "agent\t%s\n", orDash(t.Assignee))
	fmt.Fprintf(w, "after\t%s\n", orDash(strings.Join(t.DependsOn, ", ")))
	if t.StartAt != nil {
		fmt.Fprintf(w, "start at\t%s\n", when(*t.StartAt))
	}
	if t.Session != "" {
		fmt.Fprintf(w, "session\t%s\n", t.Session)
	}
	fmt.Fprintf(w, "version\t%d\n", t.Version)
	w.Flush()
	if t.Description != "" {
		fmt.Fprintf(out, "\n%s\n", t.Description)
	}
	if t.Result != "" {
		fmt.Fprintf(out, "\nresult:\n%s\n", t.Result)
	}
	fmt.Fprintln(out, "\nhistory:")
	for _, e := range t.History {
		fmt.Fprintf(out, "  %s  %s  %s\n", when(e.At), e.By, e.What)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func ptrTo[T any](v T) *T { return &v }

// taskBoard is what the task command needs: the running daemon's API, or
// the store of an App opened in this process.
type taskBoard interface {
	list(ctx context.Context, f tasks.Filter) (httpapi.TaskList, error)
	get(ctx context.Context, board, id string) (tasks.Task, error)
	add(ctx context.Context, in httpapi.TaskInput) (tasks.Task, error)
	patch(ctx context.Context, board, id string, in httpapi.TaskInput) (tasks.Task, error)
}

// openTasks reaches the daemon serving this data dir (it holds the
// database), else opens the data dir here; done releases it.
func openTasks(g *globals, cfg *config.Config) (taskBoard, func(), error) {
	if url := findDaemon(cfg, ""); url != "" {
		return httpTasks{newClient(cfg, url)}, func() {}, nil
	}
	app, err := lite.Open(cfg, &lite.Options{Logger: g.logger()})
	if err != nil {
		return nil, nil, err
	}
	return localTasks{app.Tasks()}, func() { app.Close() }, nil
}
