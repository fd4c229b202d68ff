package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/tasks"
)

func TestCLI_TaskLocal(t *testing.T) {
	c := newCLI(t)
	code, out, errs := c.run("task", "add", "collect", "the", "data", "-p", "high", "-a", "researcher", "-D", "from the logs")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "default/T-1 todo: collect the data (high, researcher)\n", out)
	code, out, errs = c.run("task", "add", "write the report", "--after", "T-1")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "default/T-2 todo")

	code, _, errs = c.run("task", "move", "T-2", "in_progress")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "T-2 depends on T-1, which is todo: finish T-1 first")

	code, out, errs = c.run("task", "move", "T-1", "in-progress", "-m", "on it")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "default/T-1 in_progress: collect the data (high, researcher)\n", out)
	code, _, errs = c.run("task", "assign", "default/T-2", "writer")
	require.Equal(t, 0, code, errs)

	code, out, errs = c.run("task", "list")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `default/T-2\s+todo\s+medium\s+writer\s+T-1\s+write the report`, out)
	assert.Regexp(t, `default/T-1\s+in_progress\s+high\s+researcher\s+-\s+collect the data`, out)
	code, out, errs = c.run("task", "list", "--status", "todo", "--json")
	require.Equal(t, 0, code, errs)
	var list httpapi.TaskList
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	require.Len(t, list.Tasks, 1)
	assert.Equal(t, "T-2", list.Tasks[0].ID)

	code, out, errs = c.run("task", "show", "t-1")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `status\s+in_progress`, out)
	assert.Contains(t, out, "from the logs")
	assert.Contains(t, out, "person  todo → in_progress; note: on it")

	// The board's file is there, and a person's edit is picked up.
	p := filepath.Join(c.dir, "tasks", "default.md")
	text, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(text), "- T-2 write the report", "- T-2 write the final report", 1)), 0o600))
	code, out, errs = c.run("task", "show", "T-2", "--json")
	require.Equal(t, 0, code, errs)
	var two tasks.Task
	require.NoError(t, json.Unmarshal([]byte(out), &two))
	assert.Equal(t, "write the final report", two.Title)
	assert.Equal(t, tasks.ByFile, two.History[len(two.History)-1].By)
}

func TestCLI_TaskThroughDaemon(t *testing.T) {
	c := newCLI(t)
	c.serve()
	code, out, errs := c.run("task", "add", "deploy", "-b", "ops", "--json")
	require.Equal(t, 0, code, errs)
	var task tasks.Task
	require.NoError(t, json.Unmarshal([]byte(out), &task), out)
	assert.Equal(t, "ops", task.Board)
	code, out, errs = c.run("task", "move", "ops/T-1", "in_progress")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "ops/T-1 in_progress")
	code, _, errs = c.run("task", "move", "ops/T-1", "in_progress")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "T-1 is already in_progress")
	code, _, errs = c.run("task", "show", "T-9", "-b", "ops")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `board ops has no task "T-9"`)
	code, out, errs = c.run("task", "list", "-b", "ops")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "ops/T-1")
}

func TestCLI_TaskErrors(t *testing.T) {
	c := newCLI(t)
	for args, want := range map[string]string{
		"task":                     "say what to do",
		"task add":                 "add needs a title",
		"task show":                "show takes one task id",
		"task move T-1":            "move takes a task id and a status",
		"task list x":              "list takes no words",
		"task frob":                `unknown subcommand "frob"`,
		"task list -a ..":          `--agent ".." is not an agent name`,
		"task list -b Bad":         `board "Bad" is not a board name`,
		"task list --status later": `status "later" is not one of`,
	} {
		code, _, errs := c.run(strings.Fields(args)...)
		assert.Equal(t, 2, code, args)
		assert.Contains(t, errs, want, args)
	}
	code, _, errs := c.run("task", "add", "x", "-p", "urgent")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `priority "urgent" is not one of low, medium, high, critical`)
}
