package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// overrideCall is the context of a call whose tools work in dir instead
// of the agent's workspace, as the loop runs a subagent's calls.
func overrideCall(dir string, readOnly bool) context.Context {
	return runtime.WithCall(context.Background(), runtime.CallInfo{SessionID: "s_child", CallID: "c1",
		Parent: "s_parent", Workspace: dir, ReadOnly: readOnly})
}

func TestWorkspaceFor(t *testing.T) {
	dir, ro := WorkspaceFor(context.Background(), "/own")
	assert.Equal(t, "/own", dir)
	assert.False(t, ro, "no call: the agent's own workspace, writable")

	dir, ro = WorkspaceFor(runtime.WithCall(context.Background(), runtime.CallInfo{CallID: "c"}), "/own")
	assert.Equal(t, "/own", dir)
	assert.False(t, ro, "a call without an override")

	dir, ro = WorkspaceFor(overrideCall("/parent", true), "/own")
	assert.Equal(t, "/parent", dir)
	assert.True(t, ro)

	dir, ro = WorkspaceFor(overrideCall("", true), "/own")
	assert.Equal(t, "/own", dir)
	assert.True(t, ro, "read-only holds without an override folder too")
}

// Every file tool works in the call's override folder; read-only calls
// read it and are refused every write, which leaves the folder as it was.
func TestFileTools_WorkspaceOverride(t *testing.T) {
	own := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(own, "mine.txt"), []byte("own file\n"), 0o644))
	parent, outside := workspace(t) // notes/todo.md, link and updir lead out
	type call struct {
		tool       runtime.Tool
		args, want string
	}
	reads := []call{
		{&ReadFile{Workspace: own}, `{"path":"notes/todo.md"}`, "one\ntwo\nthree\n"},
		{&ReadFile{Workspace: own}, `{"path":"/workspace/notes/todo.md"}`, "one\ntwo\nthree\n"},
		{&ListDir{Workspace: own}, `{}`, "notes/"},
		{&Glob{Workspace: own}, `{"pattern":"**/*.md"}`, "notes/todo.md"},
		{&Grep{Workspace: own}, `{"pattern":"thr"}`, "notes/todo.md:3: three"},
	}
	for _, readOnly := range []bool{false, true} {
		ctx := overrideCall(parent, readOnly)
		for _, c := range reads {
			res, err := c.tool.Run(ctx, []byte(c.args))
			require.NoError(t, err)
			assert.False(t, res.IsError, "%s %s: %s", c.tool.Spec().Name, c.args, res.Content)
			assert.Contains(t, res.Content, c.want, c.tool.Spec().Name)
		}
		res, err := (&ReadFile{Workspace: own}).Run(ctx, []byte(`{"path":"mine.txt"}`))
		require.NoError(t, err)
		assert.Contains(t, res.Content, "does not exist", "the agent's own workspace is not where the call works")
		for _, p := range []string{"link", "updir/secret.txt", "../secret.txt"} {
			res, err := (&ReadFile{Workspace: own}).Run(ctx, []byte(`{"path":"`+p+`"}`))
			require.NoError(t, err)
			assert.Contains(t, res.Content, "outside the workspace", "%s: a link out of the override folder is still refused", p)
		}
	}

	writes := []call{
		{&WriteFile{Workspace: own}, `{"path":"notes/new.md","content":"x"}`, "wrote 1 bytes to notes/new.md"},
		{&WriteFile{Workspace: own}, `{"path":"notes/todo.md","content":"four\n","append":true}`, "appended"},
		{&EditFile{Workspace: own}, `{"path":"notes/todo.md","old_string":"two","new_string":"2"}`, "replaced 1"},
	}
	for _, c := range writes {
		res, err := c.tool.Run(overrideCall(parent, true), []byte(c.args))
		require.NoError(t, err)
		assert.True(t, res.IsError, c.tool.Spec().Name)
		assert.Equal(t, ReadOnlyRefusal, res.Content)
	}
	assert.NoFileExists(t, filepath.Join(parent, "notes", "new.md"))
	data, _ := os.ReadFile(filepath.Join(parent, "notes", "todo.md"))
	assert.Equal(t, "one\ntwo\nthree\n", string(data), "a read-only call changed nothing")

	for _, c := range writes {
		res, err := c.tool.Run(overrideCall(parent, false), []byte(c.args))
		require.NoError(t, err)
		assert.False(t, res.IsError, res.Content)
		assert.Contains(t, res.Content, c.want)
	}
	data, _ = os.ReadFile(filepath.Join(parent, "notes", "todo.md"))
	assert.Equal(t, "one\n2\nthree\nfour\n", string(data), "a writable override is written")
	assert.NoFileExists(t, filepath.Join(own, "notes", "new.md"), "nothing went to the agent's own workspace")

	for _, p := range []string{"link", "updir/secret.txt"} {
		res, err := (&WriteFile{Workspace: own}).Run(overrideCall(parent, false), []byte(`{"path":"`+p+`","content":"pwned"}`))
		require.NoError(t, err)
		assert.Contains(t, res.Content, "outside the workspace", p)
	}
	secret, _ := os.ReadFile(outside)
	assert.Equal(t, "TOP SECRET", string(secret), "nothing outside the override was written")
}
