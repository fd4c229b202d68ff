package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime/tasks"
)

// Tasks is what the task routes need of the task boards (*tasks.Store
// has it). Changes made through the API are recorded as by "person".
type Tasks interface {
	List(ctx context.Context, f tasks.Filter) ([]tasks.Task, error)
	Get(ctx context.Context, board, id string) (tasks.Task, error)
	Add(ctx context.Context, by string, t tasks.Task) (tasks.Task, error)
	Update(ctx context.Context, board, id, by string, c tasks.Change) (tasks.Task, error)
	// FileErr is the mistake in a board's file a person must fix, or nil.
	FileErr(board string) error
}

// Task problem codes.
const (
	codeTaskNotFound = "task_not_found" // 404: no task has that id on that board
	codeTaskConflict = "task_conflict"  // 409: the task's state refuses the change (lifecycle, dependency, version)
	codeTaskInvalid  = "task_invalid"   // 422: the change is malformed (bounds, unknown dependency, cycle)
)

// TaskList is GET /api/v1/tasks: the tasks, and the mistakes in board
// files that keep a person's edit from being applied.
type TaskList struct {
	Tasks      []tasks.Task `json:"tasks"`
	FileErrors []string     `json:"file_errors,omitempty"`
}

// TaskInput is the body of POST /api/v1/tasks and PATCH
// /api/v1/tasks/{board}/{id}; absent fields are left as they are.
type TaskInput struct {
	Board       string    `json:"board,omitempty"`
	Title       *string   `json:"title,omitempty"`
	Description *string   `json:"description,omitempty"`
	Priority    *string   `json:"priority,omitempty"`
	Agent       *string   `json:"agent,omitempty"`
	After       *[]string `json:"after,omitempty"`
	// StartAt is an RFC 3339 time; "" clears it.
	StartAt *string `json:"start_at,omitempty"`
	// Status, Comment and Version are PATCH's: a move, a history note,
	// and the version the change was made from (refused with 409 if the
	// task changed since).
	Status  string `json:"status,omitempty"`
	Comment string `json:"comment,omitempty"`
	Version int    `json:"version,omitempty"`
}

func (s *Server) noTasks(w http.ResponseWriter, r *http.Request) bool {
	if s.o.Tasks == nil {
		writeProblem(w, r, http.StatusNotFound, codeNotFound, "task boards are not served here")
		return true
	}
	return false
}

// listTasks is a lite extension: ?board= &status= &agent= select.
func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) {
	if s.noTasks(w, r) {
		return
	}
	q := r.URL.Query()
	f := tasks.Filter{Board: q.Get("board"), Agent: q.Get("agent")}
	if f.Board != "" {
		if err := tasks.CheckBoard(f.Board); err != nil {
			writeProblem(w, r, http.StatusBadRequest, codeInvalid, err.Error())
			return
		}
	}
	if f.Agent != "" && !validAgentName(f.Agent) {
		writeProblem(w, r, http.StatusBadRequest, codeInvalid, "agent must be an agent's name (letters, digits and hyphens)")
		return
	}
	if v := q.Get("status"); v != "" {
		st, err := tasks.ParseStatus(v)
		if err != nil {
			writeProblem(w, r, http.StatusBadRequest, codeInvalid, err.Error())
			return
		}
		f.Status = st
	}
	list, err := s.o.Tasks.List(r.Context(), f)
	if s.taskError(w, r, err) {
		return
	}
	out := TaskList{Tasks: list}
	if out.Tasks == nil {
		out.Tasks = []tasks.Task{}
	}
	seen := map[string]bool{}
	for _, t := range list {
		if !seen[t.Board] {
			seen[t.Board] = true
			if fe := s.o.Tasks.FileErr(t.Board); fe != nil {
				out.FileErrors = append(out.FileErrors, fe.Error())
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// addTask is a lite extension: 201 with the task and its Location.
func (s *Server) addTask(w http.ResponseWriter, r *http.Request) {
	if s.noTasks(w, r) {
		return
	}
	var in TaskInput
	if status, err := decode(r, &in); err != nil {
		writeProblem(w, r, status, problemCode(status), err.Error())
		return
	}
	t := tasks.Task{Board: in.Board, Title: deref(in.Title), Description: deref(in.Description),
		Priority: tasks.Priority(deref(in.Priority)), Assignee: deref(in.Agent)}
	if in.After != nil {
		t.DependsOn = *in.After
	}
	if in.StartAt != nil {
		at, ok := startAt(w, r, *in.StartAt)
		if !ok {
			return
		}
		t.StartAt = at
	}
	if in.Status != "" || in.Version != 0 {
		writeProblem(w, r, http.StatusUnprocessableEntity, codeTaskInvalid, "a new task starts todo: leave out status and version, and move it with PATCH")
		return
	}
	got, err := s.o.Tasks.Add(r.Context(), tasks.ByPerson, t)
	if s.taskError(w, r, err) {
		return
	}
	w.Header().Set("Location", "/api/v1/tasks/"+got.Board+"/"+got.ID)
	writeJSON(w, http.StatusCreated, got)
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) {
	if s.noTasks(w, r) {
		return
	}
	t, err := s.o.Tasks.Get(r.Context(), r.PathValue("board"), r.PathValue("id"))
	if s.taskError(w, r, err) {
		return
	}
	writeJSON(w, http.StatusOK, t)
}

// patchTask moves, assigns or updates a task, or notes a comment.
func (s *Server) patchTask(w http.ResponseWriter, r *http.Request) {
	if s.noTasks(w, r) {
		return
	}
	var in TaskInput
	if status, err := decode(r, &in); err != nil {
		writeProblem(w, r, status, problemCode(status), err.Error())
		return
	}
	c := tasks.Change{Title: in.Title, Description: in.Description, Assignee: in.Agent, DependsOn: in.After,
		Comment: strings.TrimSpace(in.Comment), IfVersion: in.Version}
	if in.Priority != nil {
		p := tasks.Priority(*in.Priority)
		c.Priority = &p
	}
	if in.Status != "" {
		st, err := tasks.ParseStatus(in.Status)
		if err != nil {
			writeProblem(w, r, http.StatusUnprocessableEntity, codeTaskInvalid, err.Error())
			return
		}
		c.Status = &st
	}
	if in.StartAt != nil {
		at, ok := startAt(w, r, *in.StartAt)
		if !ok {
			return
		}
		c.StartAt = &at
	}
	t, err := s.o.Tasks.Update(r.Context(), r.PathValue("board"), r.PathValue("id"), tasks.ByPerson, c)
	if s.taskError(w, r, err) {
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func startAt(w http.ResponseWriter, r *http.Request, v string) (*time.Time, bool) {
	if strings.TrimSpace(v) == "" {
		return nil, true
	}
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(v))
	if err != nil {
		writeProblem(w, r, http.StatusUnprocessableEntity, codeTaskInvalid, "start_at is not an RFC 3339 time: write it like 2026-01-30T16:00:00Z")
		return nil, false
	}
	return &at, true
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// taskError answers err, if any, and reports whether it did.
func (s *Server) taskError(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, tasks.ErrNotFound):
		writeProblem(w, r, http.StatusNotFound, codeTaskNotFound, err.Error())
	case errors.Is(err, tasks.ErrConflict):
		writeProblem(w, r, http.StatusConflict, codeTaskConflict, err.Error())
	case errors.Is(err, tasks.ErrInvalid):
		writeProblem(w, r, http.StatusUnprocessableEntity, codeTaskInvalid, err.Error())
	default:
		s.log.Error("task request failed", "path", clip(r.URL.Path, 256), "err", err)
		writeProblem(w, r, http.StatusInternalServerError, codeInternal, "the task board cannot be read or written now: see the daemon's log")
	}
	return true
}

// Tasks lists tasks (a lite extension); zero fields of f select all.
func (c *Client) Tasks(ctx context.Context, f tasks.Filter) (TaskList, error) {
	v := url.Values{}
	for k, val := range map[string]string{"board": f.Board, "status": string(f.Status), "agent": f.Agent} {
		if val != "" {
			v.Set(k, val)
		}
	}
	path := "/api/v1/tasks"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out TaskList
	err := c.call(ctx, request{method: "GET", path: path}, &out, false)
	return out, err
}

// Task reads one task.
func (c *Client) Task(ctx context.Context, board, id string) (tasks.Task, error) {
	var t tasks.Task
	err := c.call(ctx, request{method: "GET", path: taskPath(board, id)}, &t, false)
	return t, err
}

// AddTask creates a task.
func (c *Client) AddTask(ctx context.Context, in TaskInput) (tasks.Task, error) {
	var t tasks.Task
	err := c.call(ctx, request{method: "POST", path: "/api/v1/tasks", body: in}, &t, false)
	return t, err
}

// PatchTask changes a task.
func (c *Client) PatchTask(ctx context.Context, board, id string, in TaskInput) (tasks.Task, error) {
	var t tasks.Task
	err := c.call(ctx, request{method: "PATCH", path: taskPath(board, id), body: in}, &t, false)
	return t, err
}

func taskPath(board, id string) string {
	if board == "" {
		board = tasks.DefaultBoard
	}
	return "/api/v1/tasks/" + url.PathEscape(board) + "/" + url.PathEscape(id)
}
