package tasks

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxToolArgs bounds the arguments the tasks tool reads.
const maxToolArgs = 64 << 10

// NewTool returns the tasks tool over s: an agent adds, lists, shows,
// moves, assigns and updates tasks, and comments on them; every change is
// recorded in the task's history as by "agent:NAME".
func NewTool(s *Store) runtime.Tool { return &tool{s: s} }

type tool struct{ s *Store }

var _ runtime.Tool = (*tool)(nil)

type toolArgs struct {
	Action      string    `json:"action"`
	Board       string    `json:"board"`
	ID          string    `json:"id"`
	Title       *string   `json:"title"`
	Description *string   `json:"description"`
	Priority    *string   `json:"priority"`
	Agent       *string   `json:"agent"`
	After       *[]string `json:"after"`
	Status      string    `json:"status"`
	StartAt     *string   `json:"start_at"`
	Comment     string    `json:"comment"`
	Version     int       `json:"version"`
	Mine        bool      `json:"mine"`
}

const toolSchema = `{"type":"object","properties":{` +
	`"action":{"type":"string","enum":["add","list","show","move","assign","update","comment"],"description":"add a task; list tasks; show one with its history; move it to another status; assign it to an agent; update its fields; comment on it"},` +
	`"board":{"type":"string","description":"The board (default: 'default')"},` +
	`"id":{"type":"string","description":"(show, move, assign, update, comment) The task's id, e.g. T-3 (or board/T-3)"},` +
	`"title":{"type":"string","description":"(add, update) One line, at most 200 characters"},` +
	`"description":{"type":"string","description":"(add, update) What to do, at most 8 KiB"},` +
	`"priority":{"type":"string","enum":["low","medium","high","critical"],"description":"(add, update) Default medium"},` +
	`"agent":{"type":"string","description":"(add, assign, update) The agent to work on it; empty to unassign"},` +
	`"after":{"type":"array","items":{"type":"string"},"description":"(add, update) Ids of tasks that must be done before this one starts"},` +
	`"status":{"type":"string","enum":["todo","in_progress","done","cancelled"],"description":"(move) The new status; (list) only tasks with it"},` +
	`"start_at":{"type":"string","description":"(add, update) RFC 3339 time before which its agent is not started on it; empty clears it"},` +
	`"comment":{"type":"string","description":"(comment, move) A note for the task's history, at most 500 characters"},` +
	`"version":{"type":"integer","description":"(move, assign, update) The version you read: the change is refused if the task changed since"},` +
	`"mine":{"type":"boolean","description":"(list) Only tasks assigned to you"}},` +
	`"required":["action"]}`

// Spec describes the tool to the model.
func (t *tool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "tasks",
		Description: "The task board: tasks with a priority, an assignee, dependencies and a status (todo → in_progress → done | cancelled). " +
			"Use it to plan work, hand it to other agents and record progress. Actions: add, list, show, move, assign, update, comment.",
		Schema: []byte(toolSchema)}
}

// Run does one action.
func (t *tool) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	if len(raw) > maxToolArgs {
		return runtime.ErrorResult(fmt.Sprintf("The arguments are %d bytes, over %d: send less.", len(raw), maxToolArgs)), nil
	}
	var a toolArgs
	if err := json.Unmarshal(bytes.TrimSpace(raw), &a); err != nil {
		return runtime.ErrorResult("The arguments are not valid JSON for this tool: " + err.Error()), nil
	}
	info, ok := runtime.CallFrom(ctx)
	if !ok || info.Agent == "" {
		return runtime.ErrorResult("The tasks tool works only in an agent's turn."), nil
	}
	by := ByAgent(info.Agent)
	if b, id, ok := strings.Cut(a.ID, "/"); ok {
		a.Board, a.ID = b, id // board/T-3, as lists across boards write it
	}
	if a.Action == "list" {
		return t.list(ctx, info.Agent, &a) // no board: every board's
	}
	if a.Board == "" {
		a.Board = DefaultBoard
	}
	if a.Action == "add" {
		return t.add(ctx, by, &a)
	}
	if a.ID == "" {
		return runtime.ErrorResult("Give the task's id (e.g. T-3) for " + a.Action + "."), nil
	}
	var c Change
	switch a.Action {
	case "show":
		task, err := t.s.Get(ctx, a.Board, a.ID)
		return answer(task, err, showText)
	case "move":
		st, err := ParseStatus(a.Status)
		if err != nil {
			return runtime.ErrorResult(err.Error()), nil
		}
		c.Status = &st
	case "assign":
		if a.Agent == nil {
			return runtime.ErrorResult("Give the agent to assign it to (an empty agent unassigns it)."), nil
		}
		c.Assignee = a.Agent
	case "update":
		var res *runtime.Result
		if c, res = fields(&a); res != nil {
			return *res, nil
		}
	case "comment":
		if strings.TrimSpace(a.Comment) == "" {
			return runtime.ErrorResult("Give the comment to add."), nil
		}
	default:
		return runtime.ErrorResult(fmt.Sprintf("Unknown action %q: use add, list, show, move, assign, update or comment.", cut(a.Action, 20))), nil
	}
	c.Comment, c.IfVersion = strings.TrimSpace(a.Comment), a.Version
	task, err := t.s.Update(ctx, a.Board, a.ID, by, c)
	return answer(task, err, func(t Task) string { return fmt.Sprintf("%s is now %s (version %d).", t.ID, brief(t), t.Version) })
}

// fields reads update's arguments.
func fields(a *toolArgs) (Change, *runtime.Result) {
	c := Change{Title: a.Title, Description: a.Description, Assignee: a.Agent, DependsOn: a.After}
	if a.Priority != nil {
		p := Priority(*a.Priority)
		c.Priority = &p
	}
	if a.StartAt != nil {
		at, err := parseTime(*a.StartAt)
		if err != nil {
			r := runtime.ErrorResult(err.Error())
			return c, &r
		}
		c.StartAt = &at
	}
	return c, nil
}

func parseTime(s string) (*time.Time, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("start_at %q is not an RFC 3339 time: write it like 2026-01-30T16:00:00Z", cut(s, 40))
	}
	return &at, nil
}

func (t *tool) add(ctx context.Context, by string, a *toolArgs) (runtime.Result, error) {
	nt := Task{Board: a.Board, Title: deref(a.Title), Description: deref(a.Description), Priority: Priority(deref(a.Priority)),
		Assignee: deref(a.Agent)}
	if a.After != nil {
		nt.DependsOn = *a.After
	}
	if a.StartAt != nil {
		at, err := parseTime(*a.StartAt)
		if err != nil {
			return runtime.ErrorResult(err.Error()), nil
		}
		nt.StartAt = at
	}
	task, err := t.s.Add(ctx, by, nt)
	return answer(task, err, func(t Task) string { return fmt.Sprintf("Added %s on board %s: %s.", t.ID, t.Board, brief(t)) })
}

func (t *tool) list(ctx context.Context, agent string, a *toolArgs) (runtime.Result, error) {
	f := Filter{Board: a.Board}
	if a.Status != "" {
		st, err := ParseStatus(a.Status)
		if err != nil {
			return runtime.ErrorResult(err.Error()), nil
		}
		f.Status = st
	}
	if a.Mine {
		f.Agent = agent
	}
	list, err := t.s.List(ctx, f)
	if err != nil {
		return toolErr(err)
	}
	var b strings.Builder
	if fe := t.s.FileErr(cmp.Or(a.Board, DefaultBoard)); fe != nil {
		fmt.Fprintf(&b, "(The board's file has a mistake a person must fix, so their edit is not applied yet: %v)\n", fe)
	}
	if len(list) == 0 {
		b.WriteString("No tasks match.")
	}
	for i, task := range list {
		if i == 100 {
			fmt.Fprintf(&b, "… and %d more: filter by status or agent.\n", len(list)-i)
			break
		}
		fmt.Fprintf(&b, "%s%s [%s] %s — %s\n", boardOf(task, a.Board), task.ID, task.Status, task.Title, brief(task))
	}
	details, _ := json.Marshal(list)
	return runtime.Result{Content: strings.TrimSuffix(b.String(), "\n"), Details: details}, nil
}

// boardOf prefixes an id with its board when the list spans boards.
func boardOf(t Task, listed string) string {
	if listed != "" || t.Board == DefaultBoard {
		return ""
	}
	return t.Board + "/"
}

// brief is a task's status, priority, assignee and dependencies in words.
func brief(t Task) string {
	s := fmt.Sprintf("%s, %s priority", t.Status, t.Priority)
	if t.Assignee != "" {
		s += ", assigned to " + t.Assignee
	}
	if len(t.DependsOn) > 0 {
		s += ", after " + strings.Join(t.DependsOn, ", ")
	}
	return s
}

func showText(t Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on board %s (version %d): %s\n%s\n", t.ID, t.Board, t.Version, t.Title, brief(t))
	if t.Description != "" {
		fmt.Fprintf(&b, "\n%s\n", t.Description)
	}
	if t.Result != "" {
		fmt.Fprintf(&b, "\nResult:\n%s\n", t.Result)
	}
	b.WriteString("\nHistory:\n")
	for _, e := range t.History {
		fmt.Fprintf(&b, "- %s %s: %s\n", e.At.UTC().Format("2006-01-02 15:04"), e.By, e.What)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// answer is a task for the model, or its refusal as a result it reads.
func answer(t Task, err error, text func(Task) string) (runtime.Result, error) {
	if err != nil {
		return toolErr(err)
	}
	details, _ := json.Marshal(t)
	return runtime.Result{Content: text(t), Details: details}, nil
}

func toolErr(err error) (runtime.Result, error) {
	var e *Error
	if asError(err, &e) {
		return runtime.ErrorResult(e.Msg), nil
	}
	return runtime.Result{}, err
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
