package tasks

import (
	"fmt"
	"strings"
)

// The board's Markdown file: a heading per status, one list item per
// task, its attributes on indented lines, then a blank line and its
// description indented by two spaces:
//
//	## Todo
//
//	- T-3 Write the report
//	  priority: high
//	  agent: writer
//	  after: T-1, T-2
//
//	  What the report must say.
//
// An item without an id (under ## Todo) is a new task.

// sections are the file's headings, in order.
var sections = []struct {
	status Status
	title  string
}{{Todo, "Todo"}, {InProgress, "In progress"}, {Done, "Done"}, {Cancelled, "Cancelled"}}

const fileHelp = `<!-- The task board %s of agnx-lite. Edit and save: your changes are picked up the next time
agnx-lite reads the board; a mistake is reported with its line and nothing is applied until you fix it.
Move a task by moving its item under another heading; add one with a line "- title" under ## Todo.
Under a task: "priority: low|medium|high|critical", "agent: NAME", "after: T-1, T-2", then a blank line
and its description, every line indented by two spaces. Removing a task from this file does not delete
it: move it under ## Cancelled. -->
`

// Render writes the board's file from its tasks.
func Render(boardName string, tasks []*Task) []byte {
	var w strings.Builder
	fmt.Fprintf(&w, "# Tasks: %s\n\n", boardName)
	fmt.Fprintf(&w, fileHelp, boardName)
	sorted := (&board{tasks: tasks}).sorted()
	for _, sec := range sections {
		fmt.Fprintf(&w, "\n## %s\n", sec.title)
		for _, t := range sorted {
			if t.Status == sec.status {
				renderTask(&w, t)
			}
		}
	}
	return []byte(w.String())
}

func renderTask(w *strings.Builder, t *Task) {
	fmt.Fprintf(w, "\n- %s %s\n  priority: %s\n", t.ID, t.Title, t.Priority)
	if t.Assignee != "" {
		fmt.Fprintf(w, "  agent: %s\n", t.Assignee)
	}
	if len(t.DependsOn) > 0 {
		fmt.Fprintf(w, "  after: %s\n", strings.Join(t.DependsOn, ", "))
	}
	if t.Description != "" {
		w.WriteString("\n")
		for l := range strings.SplitSeq(t.Description, "\n") {
			if l == "" {
				w.WriteString("\n")
			} else {
				w.WriteString("  " + l + "\n")
			}
		}
	}
}

// Item is one task as a board's file gives it.
type Item struct {
	Line        int    // where its "- " is
	ID          string // "" for a new task
	Title       string
	Status      Status // from its section
	Priority    Priority
	Assignee    string
	DependsOn   []string
	Description string
}

// LineError is a mistake in a board's file: its line and one sentence.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// maxItems bounds the items ParseBoard reads.
const maxItems = MaxOpen + maxClosed + 100

// ParseBoard reads a board's file. The first mistake comes back as a
// *LineError; nothing of a file with a mistake is used.
func ParseBoard(text []byte) ([]Item, error) {
	p := parser{ids: map[string]int{}}
	for i, line := range strings.Split(string(text), "\n") {
		p.n = i + 1
		if err := p.line(strings.TrimSuffix(line, "\r")); err != nil {
			return nil, err
		}
	}
	if p.comment {
		return nil, &LineError{p.commentAt, "a comment opened with <!-- is never closed: end it with -->"}
	}
	p.finish()
	return p.items, nil
}

type parser struct {
	n         int
	section   Status
	items     []Item
	cur       *Item
	desc      []string
	attrs     bool // still reading the current item's attribute lines
	comment   bool
	commentAt int
	ids       map[string]int
}

func (p *parser) fail(format string, a ...any) error {
	return &LineError{p.n, fmt.Sprintf(format, a...)}
}

func (p *parser) line(l string) error {
	if p.comment {
		p.comment = !strings.Contains(l, "-->")
		return nil
	}
	switch {
	case strings.HasPrefix(l, "<!--"):
		p.comment, p.commentAt = !strings.Contains(l[4:], "-->"), p.n
	case strings.HasPrefix(l, "# ") || l == "#":
		p.finish()
	case strings.HasPrefix(l, "## "):
		p.finish()
		st, err := ParseStatus(l[3:])
		if err != nil {
			return p.fail("the heading %q is not a status: use ## Todo, ## In progress, ## Done or ## Cancelled", cut(l, 60))
		}
		p.section = st
	case strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* ") || l == "-" || l == "*":
		p.finish()
		return p.item(l[1:])
	case strings.TrimSpace(l) == "":
		if p.cur != nil {
			p.attrs = false
			p.desc = append(p.desc, "")
		}
	case strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t"):
		if p.cur == nil {
			return p.fail("this indented line belongs to no task: start a task with \"- \" or remove the indent")
		}
		return p.body(l)
	default:
		return p.fail("this line is not a task, a heading or a comment: start a task with \"- \" or indent a description line by two spaces")
	}
	return nil
}

func (p *parser) item(rest string) error {
	if p.section == "" {
		return p.fail("a task before any heading: put it under ## Todo (or another status heading)")
	}
	if len(p.items) >= maxItems {
		return p.fail("the file has over %d tasks: cancel or remove some", maxItems)
	}
	it := Item{Line: p.n, Status: p.section, Priority: Medium}
	rest = strings.TrimSpace(rest)
	first, title, _ := strings.Cut(rest, " ")
	if id := NormID(first); id != "" && strings.HasPrefix(strings.ToUpper(first), "T-") {
		if prev, dup := p.ids[id]; dup {
			return p.fail("%s is also on line %d: a task is listed once", id, prev)
		}
		p.ids[id] = p.n
		it.ID, rest = id, strings.TrimSpace(title)
	} else if p.section != Todo {
		return p.fail("a new task (an item without an id) goes under ## Todo")
	}
	if rest == "" {
		return p.fail("the task has no title: write it after the \"- \"")
	}
	if n := len([]rune(rest)); n > MaxTitle {
		return p.fail("the title is %d characters, over %d: shorten it and put the rest in the description", n, MaxTitle)
	}
	it.Title = rest
	p.items = append(p.items, it)
	p.cur, p.attrs, p.desc = &p.items[len(p.items)-1], true, nil
	return nil
}

// body reads an indented line of the current item: an attribute while
// they last, else a description line.
func (p *parser) body(l string) error {
	if p.attrs {
		key, val, ok := strings.Cut(strings.TrimSpace(l), ":")
		if ok {
			if done, err := p.attr(strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)); done || err != nil {
				return err
			}
		}
		p.attrs = false
	}
	switch {
	case strings.HasPrefix(l, "  "):
		l = l[2:]
	case strings.HasPrefix(l, "\t"):
		l = l[1:]
	default:
		l = l[1:]
	}
	p.desc = append(p.desc, l)
	if size(p.desc) > MaxDescription {
		return p.fail("%s's description is over %d bytes: shorten it", orNew(p.cur.ID), MaxDescription)
	}
	return nil
}

func size(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}

func orNew(id string) string {
	if id == "" {
		return "the new task"
	}
	return id
}

// attr sets one attribute; done is false when key is none.
func (p *parser) attr(key, val string) (done bool, err error) {
	switch key {
	case "priority":
		pr, err := ParsePriority(val)
		if err != nil {
			return true, p.fail("%s", err.Error())
		}
		p.cur.Priority = pr
	case "agent":
		if val != "" && !validAgent(val) {
			return true, p.fail("%q is not an agent name: use letters, digits, - and _", cut(val, 40))
		}
		p.cur.Assignee = val
	case "after":
		var deps []string
		for f := range strings.FieldsFuncSeq(val, func(r rune) bool { return r == ',' || r == ' ' }) {
			id := NormID(f)
			if id == "" {
				return true, p.fail("%q is not a task id: write ids such as T-3, separated by commas", cut(f, 40))
			}
			deps = append(deps, id)
		}
		if len(deps) > MaxDeps {
			return true, p.fail("%d dependencies is over %d: split the task", len(deps), MaxDeps)
		}
		p.cur.DependsOn = deps
	default:
		return false, nil
	}
	return true, nil
}

// finish closes the current item: its description is its body lines.
func (p *parser) finish() {
	if p.cur != nil {
		p.cur.Description = normDesc(strings.Join(p.desc, "\n"))
	}
	p.cur, p.desc, p.attrs = nil, nil, false
}
