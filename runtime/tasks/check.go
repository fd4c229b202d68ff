package tasks

import (
	"strings"
	"unicode/utf8"
)

// allowed is the lifecycle: todo → in_progress → done | cancelled; a task
// not yet started may be cancelled, one in progress may be given back
// (to todo), and a done or cancelled one reopened (to todo). A task goes
// to done only through in_progress, so that someone worked on it.
var allowed = map[Status][]Status{
	Todo:       {InProgress, Cancelled},
	InProgress: {Done, Cancelled, Todo},
	Done:       {Todo},
	Cancelled:  {Todo},
}

// checkMove refuses a move the lifecycle does not allow.
func checkMove(t *Task, to Status) error {
	if t.Status == to {
		return refuse(ErrConflict, "%s is already %s: nothing to move", t.ID, to)
	}
	for _, s := range allowed[t.Status] {
		if s == to {
			return nil
		}
	}
	if to == Done && t.Status == Todo {
		return refuse(ErrConflict, "%s cannot go from todo to done: move it to in_progress first", t.ID)
	}
	return refuse(ErrConflict, "%s cannot go from %s to %s: reopen it (move to todo) first", t.ID, t.Status, to)
}

// checkFields refuses a title, description or result over its bound, or
// an unprintable assignee.
func checkFields(t *Task) error {
	t.Title = strings.TrimSpace(t.Title)
	switch {
	case t.Title == "":
		return refuse(ErrInvalid, "the task has no title: give it one")
	case utf8.RuneCountInString(t.Title) > MaxTitle:
		return refuse(ErrInvalid, "the title is over %d characters: shorten it and put the rest in the description", MaxTitle)
	case strings.ContainsAny(t.Title, "\r\n"):
		return refuse(ErrInvalid, "the title has a line break: keep it on one line and put the rest in the description")
	case !utf8.ValidString(t.Title) || !utf8.ValidString(t.Description):
		return refuse(ErrInvalid, "the title or description is not UTF-8 text: send text")
	case len(t.Description) > MaxDescription:
		return refuse(ErrInvalid, "the description is %d bytes, over %d: shorten it", len(t.Description), MaxDescription)
	case len(t.DependsOn) > MaxDeps:
		return refuse(ErrInvalid, "%s depends on %d tasks, over %d: split it", t.ID, len(t.DependsOn), MaxDeps)
	}
	if t.Assignee != "" && !validAgent(t.Assignee) {
		return refuse(ErrInvalid, "assignee %q is not an agent name: use letters, digits, - and _", cut(t.Assignee, 40))
	}
	if len(t.Result) > MaxResult {
		t.Result = cut(t.Result, MaxResult)
	}
	return nil
}

func validAgent(s string) bool {
	if s == "" || len(s) > maxAgentName {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// checkDeps refuses dependencies on tasks the board does not have, on
// the task itself, or that close a cycle. byID is the board after the
// change.
func checkDeps(t *Task, byID map[string]*Task) error {
	seen := map[string]bool{}
	for _, d := range t.DependsOn {
		switch {
		case d == t.ID:
			return refuse(ErrInvalid, "%s cannot depend on itself: remove it from its dependencies", t.ID)
		case byID[d] == nil:
			return refuse(ErrInvalid, "%s depends on %s, which this board does not have: list the board's tasks and use their ids", t.ID, d)
		case seen[d]:
			return refuse(ErrInvalid, "%s names %s twice among its dependencies: name it once", t.ID, d)
		}
		seen[d] = true
	}
	if path := cycle(t.ID, byID); path != nil {
		return refuse(ErrInvalid, "the dependencies make a cycle (%s): remove one of them", strings.Join(path, " → "))
	}
	return nil
}

// cycle returns a dependency path from id back to itself, or nil.
func cycle(id string, byID map[string]*Task) []string {
	done := map[string]bool{}
	var walk func(cur string, path []string) []string
	walk = func(cur string, path []string) []string {
		t := byID[cur]
		if t == nil || done[cur] {
			return nil
		}
		for _, d := range t.DependsOn {
			if d == id {
				return append(append(path, cur), id)
			}
			if p := walk(d, append(path, cur)); p != nil {
				return p
			}
		}
		done[cur] = true
		return nil
	}
	return walk(id, nil)
}

// blocker returns the first dependency of t that is not done, or nil. A
// task moves to in_progress or done only when every task it depends on
// is done; a cancelled dependency blocks it until removed.
func blocker(t *Task, byID map[string]*Task) *Task {
	for _, d := range t.DependsOn {
		if dt := byID[d]; dt != nil && dt.Status != Done {
			return dt
		}
	}
	return nil
}

// Ready reports whether t may be started now by its assignee: todo,
// assigned, never started, its dependencies done.
func Ready(t *Task, byID map[string]*Task) bool {
	return t.Status == Todo && t.Assignee != "" && t.Session == "" && blocker(t, byID) == nil
}
