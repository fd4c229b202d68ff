package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/tasks"
)

type httpTasks struct{ c *httpapi.Client }

func (h httpTasks) list(ctx context.Context, f tasks.Filter) (httpapi.TaskList, error) {
	return h.c.Tasks(ctx, f)
}

func (h httpTasks) get(ctx context.Context, board, id string) (tasks.Task, error) {
	return h.c.Task(ctx, board, id)
}

func (h httpTasks) add(ctx context.Context, in httpapi.TaskInput) (tasks.Task, error) {
	return h.c.AddTask(ctx, in)
}

func (h httpTasks) patch(ctx context.Context, board, id string, in httpapi.TaskInput) (tasks.Task, error) {
	return h.c.PatchTask(ctx, board, id, in)
}

// localTasks works on the boards in this process (no daemon runs);
// changes are recorded as by person, as through the API.
type localTasks struct{ s *tasks.Store }

func (l localTasks) list(ctx context.Context, f tasks.Filter) (httpapi.TaskList, error) {
	list, err := l.s.List(ctx, f)
	out := httpapi.TaskList{Tasks: list}
	seen := map[string]bool{}
	for _, t := range list {
		if fe := l.s.FileErr(t.Board); fe != nil && !seen[t.Board] {
			seen[t.Board] = true
			out.FileErrors = append(out.FileErrors, fe.Error())
		}
	}
	return out, err
}

func (l localTasks) get(ctx context.Context, board, id string) (tasks.Task, error) {
	return l.s.Get(ctx, board, id)
}

func (l localTasks) add(ctx context.Context, in httpapi.TaskInput) (tasks.Task, error) {
	t := tasks.Task{Board: in.Board, Title: deref(in.Title), Description: deref(in.Description),
		Priority: tasks.Priority(deref(in.Priority)), Assignee: deref(in.Agent)}
	if in.After != nil {
		t.DependsOn = *in.After
	}
	if in.StartAt != nil {
		at, err := parseStart(*in.StartAt)
		if err != nil {
			return tasks.Task{}, err
		}
		t.StartAt = at
	}
	return l.s.Add(ctx, tasks.ByPerson, t)
}

func (l localTasks) patch(ctx context.Context, board, id string, in httpapi.TaskInput) (tasks.Task, error) {
	c := tasks.Change{Assignee: in.Agent, Comment: strings.TrimSpace(in.Comment)}
	if in.Status != "" {
		st, err := tasks.ParseStatus(in.Status)
		if err != nil {
			return tasks.Task{}, err
		}
		c.Status = &st
	}
	return l.s.Update(ctx, board, id, tasks.ByPerson, c)
}

func parseStart(s string) (*time.Time, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return nil, errors.New("--start-at is not an RFC 3339 time: write it like 2026-01-30T16:00:00Z")
	}
	return &at, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
