package tasks

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFile_RenderedAfterChange(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	_, err := r.Add(ctx, ByPerson, Task{Title: "write the report", Priority: High, Assignee: "writer",
		Description: "What it must say.\n\npriority: not an attribute"})
	require.NoError(t, err)
	r.add(t, "review", "T-1")
	text := r.file(t, "default")
	assert.Contains(t, text, "## Todo\n\n- T-1 write the report\n  priority: high\n  agent: writer\n\n  What it must say.\n\n  priority: not an attribute\n")
	assert.Contains(t, text, "- T-2 review\n  priority: medium\n  after: T-1\n")
	st, err := os.Stat(filepath.Join(r.dir, "default.md"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	dst, err := os.Stat(r.dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), dst.Mode().Perm())

	items, err := ParseBoard([]byte(text))
	require.NoError(t, err)
	require.Len(t, items, 2)
	assert.Equal(t, Item{Line: items[0].Line, ID: "T-1", Title: "write the report", Status: Todo, Priority: High, Assignee: "writer",
		Description: "What it must say.\n\npriority: not an attribute"}, items[0])
}

// A person's edit is applied as changes by "file", and the file is
// written again in the store's form.
func TestFile_PersonEditPickedUp(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.add(t, "one")
	r.add(t, "two", "T-1")
	text := r.file(t, "default")
	text = strings.Replace(text, "- T-1 one\n  priority: medium\n", "", 1)
	text = strings.Replace(text, "## Done\n", "## Done\n\n- T-1 one, renamed\n  priority: critical\n  agent: alice\n", 1)
	text = strings.Replace(text, "## Todo\n", "## Todo\n\n- a new one\n  after: T-2\n\n  Its description.\n", 1)
	r.edit(t, "default", text)

	list, err := r.List(ctx, Filter{Board: "default"})
	require.NoError(t, err)
	require.Len(t, list, 3)
	one, err := r.Get(ctx, "", "T-1")
	require.NoError(t, err)
	assert.Equal(t, Done, one.Status, "dragged from Todo to Done: through in_progress")
	assert.Equal(t, "one, renamed", one.Title)
	assert.Equal(t, Critical, one.Priority)
	assert.Equal(t, "alice", one.Assignee)
	require.Len(t, one.History, 4)
	for _, e := range one.History[1:] {
		assert.Equal(t, ByFile, e.By)
	}
	assert.Equal(t, "in_progress → done", one.History[3].What)
	three, err := r.Get(ctx, "", "T-3")
	require.NoError(t, err)
	assert.Equal(t, "a new one", three.Title)
	assert.Equal(t, []string{"T-2"}, three.DependsOn)
	assert.Equal(t, "Its description.", three.Description)
	assert.Equal(t, ByFile, three.History[0].By)
	assert.Contains(t, r.file(t, "default"), "- T-3 a new one\n", "the file is written again with the new id")

	// Seen again (no change): nothing more happens.
	require.NoError(t, r.Sync(ctx, "default"))
	one2, _ := r.Get(ctx, "", "T-1")
	assert.Equal(t, one.Version, one2.Version)
}

// A mistake is reported with its line, nothing of the edit is applied,
// and the file is left as the person wrote it while the store goes on.
func TestFile_BadEditNotApplied(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.add(t, "one")
	text := r.file(t, "default")
	bad := strings.Replace(text, "  priority: medium\n", "  priority: medium\n  agent: bob\n  after: nine\n", 1)
	r.edit(t, "default", bad)
	line := strings.Count(bad[:strings.Index(bad, "  after: nine")], "\n") + 1

	err := r.Sync(ctx, "default")
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, line, fe.Line)
	assert.Equal(t, `tasks/default.md:`+strconv.Itoa(line)+`: "nine" is not a task id: write ids such as T-3, separated by commas`, err.Error())
	one, _ := r.Get(ctx, "", "T-1")
	assert.Empty(t, one.Assignee, "nothing of a bad edit is applied")

	_, err = r.move("T-1", InProgress)
	require.NoError(t, err, "the store goes on")
	assert.Equal(t, bad, r.file(t, "default"), "the person's file is left as they wrote it")
	require.Equal(t, fe, r.FileErr("default"))

	// Fixed: the person's change applies, and the store's move is kept.
	r.edit(t, "default", strings.Replace(bad, "  after: nine\n", "", 1))
	require.NoError(t, r.Sync(ctx, "default"))
	one, _ = r.Get(ctx, "", "T-1")
	assert.Equal(t, "bob", one.Assignee)
	assert.Equal(t, InProgress, one.Status, "three-way: the person did not touch the status")
	assert.Contains(t, r.file(t, "default"), "## In progress\n\n- T-1 one\n  priority: medium\n  agent: bob\n")
	assert.NoError(t, r.FileErr("default"))
}

func TestFile_RefusedMoveHasLine(t *testing.T) {
	r := newRig(t)
	r.add(t, "one")
	r.add(t, "two", "T-1")
	text := r.file(t, "default")
	i := strings.Index(text, "- T-2 two")
	moved := text[:i] + text[i+len("- T-2 two\n  priority: medium\n  after: T-1\n"):]
	moved = strings.Replace(moved, "## In progress\n", "## In progress\n\n- T-2 two\n  after: T-1\n", 1)
	r.edit(t, "default", moved)
	err := r.Sync(context.Background(), "default")
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, strings.Count(moved[:strings.Index(moved, "- T-2")], "\n")+1, fe.Line)
	assert.Contains(t, fe.Msg, "T-2 depends on T-1, which is todo")
	two, _ := r.Get(context.Background(), "", "T-2")
	assert.Equal(t, Todo, two.Status)
}

// A file removed, or stale after a restart, is written again from the
// store; edits made while the daemon was down are picked up.
func TestFile_Restart(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.add(t, "one")
	require.NoError(t, os.Remove(filepath.Join(r.dir, "default.md")))
	require.NoError(t, r.Sync(ctx, "default"))
	text := r.file(t, "default")
	assert.Contains(t, text, "- T-1 one")

	r.edit(t, "default", strings.Replace(text, "priority: medium", "priority: low", 1))
	s2 := r.reopen()
	task, err := s2.Get(ctx, "", "T-1")
	require.NoError(t, err)
	assert.Equal(t, Low, task.Priority)
	assert.Equal(t, "priority medium → low", task.History[1].What)
}
