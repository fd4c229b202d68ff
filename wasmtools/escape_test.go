package wasmtools

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The secret and the victim live outside the workspace; no tool may ever
// see the one or change the other.
const (
	secretText = "TOPSECRET"
	victimText = "victim"
)

// escapeWorld is a workspace beside an outside folder, with the links
// the bash tool could plant in the workspace already in place.
type escapeWorld struct {
	base, ws, outside string
}

// newEscapeWorld lays out
//
//	outside/secret.txt, outside/secret.json, outside/victim.txt
//	ws/inside.txt, ws/sub/file.txt
//	ws/abs -> <outside>/secret.txt           absolute symlink
//	ws/sub/rel -> ../../outside/secret.txt   relative symlink
//	ws/dirlink -> <outside>                  absolute symlink to a folder
//	ws/updir -> ../outside                   relative symlink to a folder
//	ws/victim -> <outside>/victim.txt        for writes
//	ws/dangling -> <outside>/later.txt       target does not exist yet
//	ws/hard                                  hard link to outside/victim.txt
//	ws/good -> inside.txt, ws/gooddir -> sub links that stay inside
func newEscapeWorld(t *testing.T) escapeWorld {
	t.Helper()
	base := t.TempDir()
	w := escapeWorld{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{w.outside, filepath.Join(w.ws, "sub")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	files := map[string]string{
		filepath.Join(w.outside, "secret.txt"):  secretText,
		filepath.Join(w.outside, "secret.json"): `{"key": "` + secretText + `"}`,
		filepath.Join(w.outside, "victim.txt"):  victimText,
		filepath.Join(w.ws, "inside.txt"):       "inside",
		filepath.Join(w.ws, "sub", "file.txt"):  "sub file",
	}
	for p, data := range files {
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	links := map[string]string{
		"abs":         filepath.Join(w.outside, "secret.txt"),
		"sub/rel":     "../../outside/secret.txt",
		"dirlink":     w.outside,
		"updir":       "../outside",
		"victim":      filepath.Join(w.outside, "victim.txt"),
		"dangling":    filepath.Join(w.outside, "later.txt"),
		"json":        filepath.Join(w.outside, "secret.json"),
		"good":        "inside.txt",
		"gooddir":     "sub",
		"sub/goodrel": "../inside.txt",
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(w.ws, name)))
	}
	require.NoError(t, os.Link(filepath.Join(w.outside, "victim.txt"), filepath.Join(w.ws, "hard")))
	return w
}

// assertOutsideUntouched checks that nothing outside the workspace was
// changed or created.
func (w escapeWorld) assertOutsideUntouched(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.outside, "victim.txt"))
	require.NoError(t, err)
	assert.Equal(t, victimText, string(data), "a file outside the workspace was overwritten")
	entries, err := os.ReadDir(w.outside)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"secret.txt", "secret.json", "victim.txt"}, names, "something was created outside the workspace")
}

func TestTool_RunWorkspaceEscapes(t *testing.T) {
	w := newEscapeWorld(t)
	ro := testtool(t, "workspace: ro\n", ToolOptions{Workspace: w.ws})
	rw := testtool(t, "workspace: rw\n", ToolOptions{Workspace: w.ws})
	// later.txt appears after the link to it was planted.
	require.NoError(t, os.WriteFile(filepath.Join(w.outside, "later.txt"), []byte(secretText), 0o644))
	reads := map[string]string{
		"absolute symlink":             `{"mode": "read", "file": "abs"}`,
		"relative ../../ symlink":      `{"mode": "read", "file": "sub/rel"}`,
		"absolute symlinked folder":    `{"mode": "read", "file": "dirlink/secret.txt"}`,
		"relative symlinked folder":    `{"mode": "read", "file": "updir/secret.txt"}`,
		"dangling symlink, later made": `{"mode": "read", "file": "dangling"}`,
		"dot-dot path":                 `{"mode": "read", "file": "../outside/secret.txt"}`,
		"dot-dot inside a path":        `{"mode": "read", "file": "sub/../../outside/secret.txt"}`,
		"list a symlinked folder":      `{"mode": "list", "file": "dirlink"}`,
	}
	for name, args := range reads {
		for _, tool := range []*Tool{ro, rw} {
			t.Run(tool.m.Workspace+"/"+name, func(t *testing.T) {
				content, isErr := call(t, tool, args)
				assert.True(t, isErr, content)
				assert.NotContains(t, content, secretText)
				assert.NotContains(t, content, "victim.txt", "a folder outside was listed")
			})
		}
	}
	require.NoError(t, os.Remove(filepath.Join(w.outside, "later.txt")))
	writes := map[string]string{
		"through an absolute symlink":       `{"mode": "write", "file": "victim"}`,
		"through a hard link":               `{"mode": "write", "file": "hard"}`,
		"a file under a symlinked folder":   `{"mode": "write", "file": "dirlink/new.txt"}`,
		"a file under a relative folder":    `{"mode": "write", "file": "updir/new.txt"}`,
		"a folder under a symlinked folder": `{"mode": "mkdir", "file": "dirlink/newdir"}`,
		"rename into a symlinked folder":    `{"mode": "rename", "file": "inside.txt", "to": "dirlink/moved.txt"}`,
		"remove through a symlinked folder": `{"mode": "remove", "file": "dirlink/victim.txt"}`,
	}
	for name, args := range writes {
		t.Run("rw/"+name, func(t *testing.T) {
			content, isErr := call(t, rw, args)
			assert.True(t, isErr, content)
			w.assertOutsideUntouched(t)
		})
	}
	t.Run("rw/through a dangling symlink", func(t *testing.T) {
		content, isErr := call(t, rw, `{"mode": "write", "file": "dangling"}`)
		assert.True(t, isErr, content)
		w.assertOutsideUntouched(t)
	})
}

// TestTool_RunWorkspaceInside: what stays inside the workspace still
// works, links that stay inside included.
func TestTool_RunWorkspaceInside(t *testing.T) {
	w := newEscapeWorld(t)
	ro := testtool(t, "workspace: ro\n", ToolOptions{Workspace: w.ws})
	rw := testtool(t, "workspace: rw\n", ToolOptions{Workspace: w.ws})
	for _, tool := range []*Tool{ro, rw} {
		for args, want := range map[string]string{
			`{"mode": "read", "file": "inside.txt"}`:        "inside",
			`{"mode": "read", "file": "good"}`:              "inside",
			`{"mode": "read", "file": "sub/goodrel"}`:       "inside",
			`{"mode": "read", "file": "gooddir/file.txt"}`:  "sub file",
			`{"mode": "read", "file": "sub/../inside.txt"}`: "inside",
		} {
			content, isErr := call(t, tool, args)
			assert.False(t, isErr, "%s %s: %s", tool.m.Workspace, args, content)
			assert.Equal(t, want, content, args)
		}
		content, isErr := call(t, tool, `{"mode": "list", "file": "sub"}`)
		assert.False(t, isErr, content)
		assert.Equal(t, "file.txt\ngoodrel\nrel\n", content)
	}
	steps := []struct{ args, want string }{
		{`{"mode": "write", "file": "new.txt"}`, "wrote new.txt\n"},
		{`{"mode": "write", "file": "gooddir/new.txt"}`, "wrote gooddir/new.txt\n"},
		{`{"mode": "mkdir", "file": "made"}`, "(no output)"},
		{`{"mode": "rename", "file": "new.txt", "to": "made/moved.txt"}`, "(no output)"},
		{`{"mode": "read", "file": "made/moved.txt"}`, "written"},
		{`{"mode": "remove", "file": "sub/new.txt"}`, "(no output)"},
		{`{"mode": "list", "file": "made"}`, "moved.txt\n"},
	}
	for _, s := range steps {
		content, isErr := call(t, rw, s.args)
		assert.False(t, isErr, "%s: %s", s.args, content)
		assert.Equal(t, s.want, content, s.args)
	}
	for _, args := range []string{`{"mode": "mkdir", "file": "ro"}`, `{"mode": "remove", "file": "inside.txt"}`,
		`{"mode": "rename", "file": "inside.txt", "to": "x.txt"}`} {
		content, isErr := call(t, ro, args)
		assert.True(t, isErr, "ro %s: %s", args, content)
	}
	assert.FileExists(t, filepath.Join(w.ws, "inside.txt"))
	assert.NoDirExists(t, filepath.Join(w.ws, "ro"))
	w.assertOutsideUntouched(t)
}

// TestTool_RunWorkspaceRace swaps a folder of the workspace for a symlink
// to the outside and back 2,000 times while the tool reads through it:
// no read may ever see the secret, whatever the interleaving.
func TestTool_RunWorkspaceRace(t *testing.T) {
	w := newEscapeWorld(t)
	tool := testtool(t, "workspace: ro\nlimits: {timeout: 60s}\n", ToolOptions{Workspace: w.ws})
	flip, real := filepath.Join(w.ws, "flip"), filepath.Join(w.ws, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "secret.txt"), []byte("inside"), 0o644))
	var stop atomic.Bool
	var flips int
	var wg sync.WaitGroup
	wg.Go(func() {
		for flips = 0; flips < 2000 || !stop.Load(); flips++ {
			_ = os.Rename(real, flip) // the real folder
			_ = os.Rename(flip, real)
			_ = os.Symlink(w.outside, flip) // a link to the outside
			_ = os.Remove(flip)
		}
	})
	res, err := tool.Run(context.Background(), []byte(`{"mode": "hammer", "file": "flip/secret.txt", "n": 2000}`))
	stop.Store(true)
	wg.Wait()
	require.NoError(t, err)
	assert.False(t, res.IsError, res.Content)
	assert.NotContains(t, res.Content, secretText)
	assert.GreaterOrEqual(t, flips, 2000)
	t.Log(res.Content)
}

// TestTool_RunExamplesPlantedLinks runs the shipped wc and jsonq (both
// workspace: ro) on links the bash tool could have planted.
func TestTool_RunExamplesPlantedLinks(t *testing.T) {
	w := newEscapeWorld(t)
	wc := mustLoad(t, example(t, "wc"), ToolOptions{Workspace: w.ws})
	for _, p := range []string{"abs", "sub/rel", "dirlink/secret.txt", "updir/secret.json", "/workspace/abs"} {
		content, isErr := call(t, wc, `{"path": "`+p+`"}`)
		assert.True(t, isErr, "wc %s: %s", p, content)
		assert.Contains(t, content, "cannot open")
	}
	content, isErr := call(t, wc, `{"path": "good"}`)
	assert.False(t, isErr, content)
	assert.Equal(t, "0 lines, 1 words, 6 bytes in good", content)

	jsonq := mustLoad(t, example(t, "jsonq"), ToolOptions{Workspace: w.ws})
	for _, p := range []string{"json", "dirlink/secret.json", "updir/secret.json"} {
		content, isErr := call(t, jsonq, `{"file": "`+p+`", "path": ""}`)
		assert.True(t, isErr, "jsonq %s: %s", p, content)
		assert.NotContains(t, content, secretText)
	}
}

// TestTool_RunWorkspaceGone: each call opens the workspace afresh, so one
// removed after the tool loaded is an error of that call, and one made
// again is used.
func TestTool_RunWorkspaceGone(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	tool := testtool(t, "workspace: ro\n", ToolOptions{Workspace: ws})
	require.NoError(t, os.Remove(ws))
	_, err := tool.Run(context.Background(), []byte(`{"mode": "list", "file": "."}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot open the workspace "+ws)
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "again.txt"), nil, 0o644))
	content, isErr := call(t, tool, `{"mode": "list", "file": "."}`)
	assert.False(t, isErr, content)
	assert.Equal(t, "again.txt\n", content)
}
