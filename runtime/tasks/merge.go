package tasks

import (
	"errors"
	"slices"
	"time"
)

// merge applies a person's file to the board: new items become tasks,
// and of each listed task the fields the person changed since the file
// was written (see fileBase) take the file's values. Tasks the file does
// not list are left alone. The first refusal comes back as a *LineError
// at its item.
func (b *board) merge(items []Item, now time.Time) ([]*Task, error) {
	var changed []*Task
	lineOf := map[*Task]int{}
	mark := func(t *Task, line int) {
		if _, ok := lineOf[t]; !ok {
			changed = append(changed, t)
		}
		lineOf[t] = line
	}
	type move struct {
		t    *Task
		to   Status
		line int
	}
	var moves []move
	for i := range items {
		it := &items[i]
		if it.ID == "" {
			mark(b.add(now, ByFile, it.Title, it.Description, it.Priority, it.Assignee, it.DependsOn, nil), it.Line)
			continue
		}
		t := b.byID[it.ID]
		if t == nil {
			return nil, &LineError{it.Line, it.ID + " is not a task of this board: remove the id to add it as a new task"}
		}
		c := b.personChanges(t, it)
		if c.Status != nil {
			moves = append(moves, move{t, *c.Status, it.Line})
			c.Status = nil
		}
		v := t.Version
		if err := b.updateIn(t, c, now); err != nil {
			return nil, atLine(it.Line, err)
		}
		if t.Version != v {
			mark(t, it.Line)
		}
	}
	// Moves wait for each other: a task moved to done lets one that
	// depends on it move to in_progress, whatever their order in the file.
	for progress := true; progress && len(moves) > 0; {
		progress = false
		moves = slices.DeleteFunc(moves, func(m move) bool {
			if b.moveIn(m.t, m.to, now) != nil {
				return false
			}
			mark(m.t, m.line)
			progress = true
			return true
		})
	}
	if len(moves) > 0 {
		return nil, atLine(moves[0].line, b.moveIn(moves[0].t, moves[0].to, now))
	}
	for _, t := range changed {
		if err := checkFields(t); err != nil {
			return nil, atLine(lineOf[t], err)
		}
		if err := checkDeps(t, b.byID); err != nil {
			return nil, atLine(lineOf[t], err)
		}
	}
	return changed, nil
}

// moveIn moves t to status to; a task dragged from Todo straight to Done
// goes through in_progress (someone worked on it).
func (b *board) moveIn(t *Task, to Status, now time.Time) error {
	orig := *t
	steps := []Status{to}
	if t.Status == Todo && to == Done {
		steps = []Status{InProgress, Done}
	}
	for _, st := range steps {
		if err := b.updateIn(t, Change{Status: &st}, now); err != nil {
			*t = orig
			return err
		}
	}
	return nil
}

// updateIn applies c to the board's t in place, or leaves it as it was.
func (b *board) updateIn(t *Task, c Change, now time.Time) error {
	nt := *t
	if err := b.update(&nt, ByFile, c, now); err != nil {
		return err
	}
	*t = nt
	return nil
}

// personChanges is what the person changed of t in it: the fields whose
// file value differs from what the file was written with (every field
// that differs from t when the base does not know t).
func (b *board) personChanges(t *Task, it *Item) Change {
	base := b.base.Fields[t.ID]
	file := fieldHashes(it.Title, it.Priority, it.Status, it.Assignee, it.DependsOn, it.Description)
	cur := fieldHashes(t.Title, t.Priority, t.Status, t.Assignee, t.DependsOn, t.Description)
	edited := func(i int) bool {
		if len(base) != len(file) {
			return file[i] != cur[i]
		}
		return file[i] != base[i] && file[i] != cur[i]
	}
	var c Change
	if edited(0) {
		c.Title = &it.Title
	}
	if edited(1) {
		c.Priority = &it.Priority
	}
	if edited(2) {
		c.Status = &it.Status
	}
	if edited(3) {
		c.Assignee = &it.Assignee
	}
	if edited(4) {
		deps := slices.Clone(it.DependsOn)
		c.DependsOn = &deps
	}
	if edited(5) {
		c.Description = &it.Description
	}
	return c
}

func atLine(line int, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return &LineError{line, e.Msg}
	}
	return err
}
