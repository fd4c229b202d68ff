package config

import (
	"path/filepath"
	"time"
)

// Tasks is the tasks: section of agnx.yaml: when the agent a task
// is assigned to is started on it.
//
//	tasks:
//	  start: now          # manual (default) | now
//	  check_seconds: 30   # how often the boards' files and start times are looked at
//
// With start: now, the daemon starts the assignee of a task as soon as it
// is ready: todo, assigned, never started, every dependency done. With
// manual, only a task given a start_at is started, when that time comes;
// the others wait for their agent to take them (a schedule can tell an
// agent "work on your next task": it lists its tasks with the tasks tool
// and moves one to in_progress).
type Tasks struct {
	// Start is manual (the default: only a task given a start_at is
	// started, when that time comes) or now (the assignee of a task is
	// started on it as soon as it is ready: todo, assigned, never
	// started, every dependency done).
	Start string `yaml:"start"`
	// CheckSeconds is how often the boards' files and start times are
	// looked at (5..3600; default 30).
	CheckSeconds int `yaml:"check_seconds"`
}

// The values of tasks.start.
const (
	TasksStartManual = "manual"
	TasksStartNow    = "now"
)

// Interval is how often the task timer looks at the boards.
func (t *Tasks) Interval() time.Duration {
	if t.CheckSeconds <= 0 {
		return 30 * time.Second
	}
	return time.Duration(t.CheckSeconds) * time.Second
}

// TasksDir is where the boards' Markdown files are.
func (c *Config) TasksDir() string { return filepath.Join(c.DataDir, "tasks") }

func (c *Config) validateTasks() error {
	switch c.Tasks.Start {
	case "", TasksStartManual, TasksStartNow:
	default:
		return c.errorf("tasks.start", "tasks.start %q is not manual or now: use one of them", clipText(c.Tasks.Start, 40))
	}
	if n := c.Tasks.CheckSeconds; n != 0 && (n < 5 || n > 3600) {
		return c.errorf("tasks.check_seconds", "tasks.check_seconds %d is not between 5 and 3600: use a value in that range", n)
	}
	return nil
}
