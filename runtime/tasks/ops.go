package tasks

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// Add creates a task on t.Board (DefaultBoard when empty) with the next
// id; it starts todo. Only Board, Title, Description, Priority, Assignee,
// DependsOn and StartAt are read from t.
func (s *Store) Add(ctx context.Context, by string, t Task) (Task, error) {
	if t.Board == "" {
		t.Board = DefaultBoard
	}
	p, err := ParsePriority(string(t.Priority))
	if err != nil {
		return Task{}, refuse(ErrInvalid, "%s", err.Error())
	}
	deps, err := normIDs(t.DependsOn)
	if err != nil {
		return Task{}, err
	}
	out, err := s.change(ctx, edit{board: t.Board, fn: func(b *board) ([]*Task, error) {
		return []*Task{b.add(s.o.Now(), by, t.Title, t.Description, p, t.Assignee, deps, t.StartAt)}, nil
	}})
	if err != nil {
		return Task{}, err
	}
	return *out[0], nil
}

func (b *board) add(now time.Time, by, title, desc string, p Priority, assignee string, deps []string, startAt *time.Time) *Task {
	b.next++
	nt := &Task{ID: fmt.Sprintf("T-%d", b.next), Board: b.name, Title: title, Description: normDesc(desc), Priority: p,
		Status: Todo, Assignee: assignee, DependsOn: deps, StartAt: startAt, Created: now, Updated: now, Version: 1,
		History: []Entry{{At: now, By: by, What: "created"}}}
	b.tasks = append(b.tasks, nt)
	b.byID[nt.ID] = nt
	return nt
}

// normIDs reads ids as people type them.
func normIDs(ids []string) ([]string, error) {
	out := make([]string, 0, len(ids))
	for _, d := range ids {
		if strings.TrimSpace(d) == "" {
			continue
		}
		n := NormID(d)
		if n == "" {
			return nil, refuse(ErrInvalid, "%q is not a task id: use ids such as T-3", cut(d, 40))
		}
		out = append(out, n)
	}
	if len(out) > MaxDeps {
		return nil, refuse(ErrInvalid, "%d dependencies is over %d: split the task", len(out), MaxDeps)
	}
	return out, nil
}

// normDesc is a description as the board's file keeps it: LF line ends,
// no trailing spaces, no blank lines around it.
func normDesc(d string) string {
	d = strings.ReplaceAll(strings.ReplaceAll(d, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(d, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// Get returns one task; an *Error of ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, boardName, id string) (Task, error) {
	if boardName == "" {
		boardName = DefaultBoard
	}
	if err := CheckBoard(boardName); err != nil {
		return Task{}, refuse(ErrInvalid, "%s", err.Error())
	}
	s.Sync(ctx, boardName)
	b, err := s.read(boardName)
	if err != nil {
		return Task{}, err
	}
	t, err := b.get(id)
	if err != nil {
		return Task{}, err
	}
	return *t, nil
}

func (b *board) get(id string) (*Task, error) {
	n := NormID(id)
	if t := b.byID[n]; t != nil && n != "" {
		return t, nil
	}
	return nil, refuse(ErrNotFound, "board %s has no task %q: list them with `agnx-lite task list -b %s`", b.name, cut(id, 20), b.name)
}

// Filter selects tasks for List; zero fields select all.
type Filter struct {
	Board  string
	Status Status
	Agent  string
}

// List returns the tasks that match f: by board, then status (todo,
// in_progress, done, cancelled), priority (critical first) and id.
func (s *Store) List(ctx context.Context, f Filter) ([]Task, error) {
	boards := []string{f.Board}
	if f.Board == "" {
		var err error
		if boards, err = s.Boards(); err != nil {
			return nil, err
		}
	} else if err := CheckBoard(f.Board); err != nil {
		return nil, refuse(ErrInvalid, "%s", err.Error())
	}
	var out []Task
	for _, name := range boards {
		s.Sync(ctx, name)
		b, err := s.read(name)
		if err != nil {
			return nil, err
		}
		for _, t := range b.sorted() {
			if (f.Status == "" || t.Status == f.Status) && (f.Agent == "" || t.Assignee == f.Agent) {
				out = append(out, *t)
			}
		}
	}
	return out, nil
}

func statusRank(s Status) int { return slices.Index(Statuses, s) }

// sorted is the board in list order.
func (b *board) sorted() []*Task {
	out := slices.Clone(b.tasks)
	slices.SortStableFunc(out, func(x, y *Task) int {
		return cmp.Or(cmp.Compare(statusRank(x.Status), statusRank(y.Status)),
			cmp.Compare(x.Priority.rank(), y.Priority.rank()), cmp.Compare(x.Num(), y.Num()))
	})
	return out
}

// Change is an update of one task; nil fields are left as they are.
type Change struct {
	Status      *Status
	Assignee    *string // "" unassigns
	Title       *string
	Description *string
	Priority    *Priority
	DependsOn   *[]string
	StartAt     **time.Time // a nil *time.Time clears it
	Result      *string
	// Comment adds a history entry of its own.
	Comment string
	// IfVersion, when not zero, refuses the change unless the task is
	// still at that version: two writers that read the same version
	// cannot both change it.
	IfVersion int
}

// Update changes one task: its status through the lifecycle (see
// allowed), its other fields within their bounds; every change is one
// history entry by by.
func (s *Store) Update(ctx context.Context, boardName, id, by string, c Change) (Task, error) {
	if boardName == "" {
		boardName = DefaultBoard
	}
	out, err := s.change(ctx, edit{board: boardName, fn: func(b *board) ([]*Task, error) {
		t, err := b.get(id)
		if err != nil {
			return nil, err
		}
		if c.IfVersion != 0 && c.IfVersion != t.Version {
			return nil, refuse(ErrConflict, "%s changed since you read it (version %d, now %d, last by %s): read it again and retry",
				t.ID, c.IfVersion, t.Version, lastBy(t))
		}
		nt := *t
		if err := b.update(&nt, by, c, s.o.Now()); err != nil {
			return nil, err
		}
		*t = nt
		return []*Task{t}, nil
	}})
	if err != nil {
		return Task{}, err
	}
	return *out[0], nil
}

func lastBy(t *Task) string {
	if len(t.History) == 0 {
		return "nobody"
	}
	return t.History[len(t.History)-1].By
}

// update applies c to t (a copy of the board's task) and logs it.
func (b *board) update(t *Task, by string, c Change, now time.Time) error {
	var what []string
	t.History = slices.Clone(t.History)
	if c.Title != nil && strings.TrimSpace(*c.Title) != t.Title {
		t.Title = strings.TrimSpace(*c.Title)
		what = append(what, "title set")
	}
	if c.Description != nil && normDesc(*c.Description) != t.Description {
		t.Description = normDesc(*c.Description)
		what = append(what, "description set")
	}
	if c.Priority != nil {
		p, err := ParsePriority(string(*c.Priority))
		if err != nil {
			return refuse(ErrInvalid, "%s", err.Error())
		}
		if p != t.Priority {
			what = append(what, fmt.Sprintf("priority %s → %s", t.Priority, p))
			t.Priority = p
		}
	}
	if c.Assignee != nil && *c.Assignee != t.Assignee {
		if *c.Assignee == "" {
			what = append(what, "unassigned from "+t.Assignee)
		} else {
			what = append(what, "assigned to "+*c.Assignee)
		}
		t.Assignee = *c.Assignee
	}
	if c.DependsOn != nil {
		deps, err := normIDs(*c.DependsOn)
		if err != nil {
			return err
		}
		if !slices.Equal(deps, t.DependsOn) {
			t.DependsOn = deps
			what = append(what, "depends on "+orNone(strings.Join(deps, ", ")))
		}
	}
	if c.StartAt != nil {
		t.StartAt = *c.StartAt
		if t.StartAt != nil {
			what = append(what, "start at "+t.StartAt.UTC().Format(time.RFC3339))
		} else {
			what = append(what, "start time cleared")
		}
	}
	if c.Result != nil {
		t.Result = *c.Result
		what = append(what, "result recorded")
	}
	if c.Status != nil {
		if err := b.move(t, *c.Status); err != nil {
			return err
		}
		if *c.Status != t.Status {
			what = append(what, fmt.Sprintf("%s → %s", t.Status, *c.Status))
			t.Status = *c.Status
		}
	}
	if c.Comment != "" {
		what = append(what, "note: "+c.Comment)
	}
	if len(what) == 0 {
		return nil // nothing changed: no version, no history
	}
	t.Version++
	t.Updated = now
	t.History = append(t.History, Entry{At: now, By: by, What: cut(strings.Join(what, "; "), maxWhat)})
	return nil
}

// move checks a status change: the lifecycle, and that a task starts or
// finishes only when every task it depends on is done.
func (b *board) move(t *Task, to Status) error {
	if err := checkMove(t, to); err != nil {
		return err
	}
	if to == InProgress || to == Done {
		if d := blocker(t, b.byID); d != nil {
			return refuse(ErrConflict, "%s depends on %s, which is %s: finish %s first (or remove it from the dependencies)", t.ID, d.ID, d.Status, d.ID)
		}
	}
	if to == Todo {
		t.Session = "" // given back or reopened: it may be started again
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// Begin starts agent work on a ready task (see Ready): it records session
// and moves the task to in_progress by by in the transaction commit runs
// (the one that stores the session's first message), so that a task is
// started once. A task that is not ready is refused with ErrConflict.
func (s *Store) Begin(ctx context.Context, boardName, id, by, session string, commit func(func(*storage.Tx) error) error) (Task, error) {
	out, err := s.change(ctx, edit{board: boardName, commit: commit, fn: func(b *board) ([]*Task, error) {
		t, err := b.get(id)
		if err != nil {
			return nil, err
		}
		if !Ready(t, b.byID) {
			return nil, refuse(ErrConflict, "%s is not ready to start (it is %s, assigned to %q, session %q)", t.ID, t.Status, t.Assignee, t.Session)
		}
		nt := *t
		if err := b.update(&nt, by, Change{Status: ptr(InProgress), Comment: "started in session " + session}, s.o.Now()); err != nil {
			return nil, err
		}
		nt.Session = session
		*t = nt
		return []*Task{t}, nil
	}})
	if err != nil {
		return Task{}, err
	}
	return *out[0], nil
}

// Finish records how the turn of session on a task ended: completed, its
// answer is the result and the task is done; otherwise it stays
// in_progress with a note saying why. A task no longer in progress in that
// session (moved meanwhile) is left alone.
func (s *Store) Finish(ctx context.Context, boardName, id, session, by string, completed bool, answer, why string) error {
	_, err := s.change(ctx, edit{board: boardName, fn: func(b *board) ([]*Task, error) {
		t, err := b.get(id)
		if err != nil {
			return nil, err
		}
		if t.Status != InProgress || t.Session != session {
			return nil, nil
		}
		nt := *t
		c := Change{Comment: "the turn ended: " + why}
		if completed {
			res := cut(answer, MaxResult)
			c = Change{Result: &res, Status: ptr(Done)}
		}
		if err := b.update(&nt, by, c, s.o.Now()); err != nil {
			return nil, err
		}
		*t = nt
		return []*Task{t}, nil
	}})
	return err
}

func ptr[T any](v T) *T { return &v }

// Due returns the tasks of every board that are ready (see Ready) and
// whose StartAt, if any, is not after now, with the soonest later StartAt
// of a ready task (zero when none waits).
func (s *Store) Due(ctx context.Context, now time.Time) (due []Task, next time.Time, err error) {
	boards, err := s.Boards()
	if err != nil {
		return nil, next, err
	}
	for _, name := range boards {
		s.Sync(ctx, name)
		b, err := s.read(name)
		if err != nil {
			return nil, next, err
		}
		for _, t := range b.sorted() {
			if !Ready(t, b.byID) {
				continue
			}
			if t.StartAt != nil && t.StartAt.After(now) {
				if next.IsZero() || t.StartAt.Before(next) {
					next = *t.StartAt
				}
				continue
			}
			due = append(due, *t)
		}
	}
	return due, next, nil
}
