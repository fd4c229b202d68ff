package tools

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFile_Run(t *testing.T) {
	ws, outside := workspace(t)
	tool := &WriteFile{Workspace: ws}
	ctx := context.Background()

	res, err := tool.Run(ctx, []byte(`{"path":"new/deep/file.txt","content":"hello"}`))
	require.NoError(t, err)
	assert.False(t, res.IsError, res.Content)
	data, err := os.ReadFile(filepath.Join(ws, "new", "deep", "file.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello", string(data))

	res, err = tool.Run(ctx, []byte(`{"path":"new/deep/file.txt","content":" world","append":true}`))
	require.NoError(t, err)
	data, _ = os.ReadFile(filepath.Join(ws, "new", "deep", "file.txt"))
	assert.Equal(t, "hello world", string(data))

	for _, p := range []string{"../evil.txt", "link", "updir/secret.txt", "notes/../../evil.txt"} {
		res, err = tool.Run(ctx, []byte(`{"path":"`+p+`","content":"pwned"}`))
		require.NoError(t, err)
		assert.True(t, res.IsError, p)
		assert.Contains(t, res.Content, "outside the workspace", p)
	}
	secret, _ := os.ReadFile(outside)
	assert.Equal(t, "TOP SECRET", string(secret), "nothing outside was written")
	assert.NoFileExists(t, filepath.Join(filepath.Dir(ws), "evil.txt"))
}

func TestEditFile_Run(t *testing.T) {
	ws, _ := workspace(t)
	tool := &EditFile{Workspace: ws}
	ctx := context.Background()
	path := filepath.Join(ws, "notes", "todo.md")

	res, _ := tool.Run(ctx, []byte(`{"path":"notes/todo.md","old_string":"two","new_string":"2"}`))
	assert.False(t, res.IsError, res.Content)
	data, _ := os.ReadFile(path)
	assert.Equal(t, "one\n2\nthree\n", string(data))

	res, _ = tool.Run(ctx, []byte(`{"path":"notes/todo.md","old_string":"missing","new_string":"x"}`))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "was not found")

	require.NoError(t, os.WriteFile(path, []byte("a a a"), 0o644))
	res, _ = tool.Run(ctx, []byte(`{"path":"notes/todo.md","old_string":"a","new_string":"b"}`))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "occurs 3 times")
	res, _ = tool.Run(ctx, []byte(`{"path":"notes/todo.md","old_string":"a","new_string":"b","replace_all":true}`))
	assert.False(t, res.IsError)
	assert.Contains(t, res.Content, "replaced 3")
	data, _ = os.ReadFile(path)
	assert.Equal(t, "b b b", string(data))

	res, _ = tool.Run(ctx, []byte(`{"path":"link","old_string":"TOP","new_string":"x"}`))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "outside the workspace")
}

// A symlink swapped in between a check and the use must not lead out:
// os.Root resolves every component inside the workspace at the moment of
// use.
func TestReadFile_SymlinkSwapRace(t *testing.T) {
	ws, outside := workspace(t)
	inside := filepath.Join(ws, "inside.txt")
	require.NoError(t, os.WriteFile(inside, []byte("harmless"), 0o644))
	target := filepath.Join(ws, "target")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var swaps atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := target + ".tmp"
			_ = os.Remove(tmp)
			if i%2 == 0 {
				_ = os.Symlink(outside, tmp)
			} else {
				_ = os.Symlink("inside.txt", tmp)
			}
			_ = os.Rename(tmp, target)
			swaps.Add(1)
		}
	}()
	tool := &ReadFile{Workspace: ws}
	harmless, reads := 0, 0
	// Read until the link has flipped many times under the reads (the
	// swapper may be scheduled late on a loaded machine).
	deadline := time.Now().Add(10 * time.Second)
	for (reads < 2000 || swaps.Load() < 500 || harmless == 0) && time.Now().Before(deadline) {
		res, err := tool.Run(context.Background(), []byte(`{"path":"target"}`))
		require.NoError(t, err)
		require.NotContains(t, res.Content, "TOP SECRET")
		if res.Content == "harmless" {
			harmless++
		}
		reads++
	}
	close(stop)
	wg.Wait()
	assert.Positive(t, harmless, "the race really alternated")
}

// TestWriteFile_HardLink: a hard link in the workspace to a file outside
// (made on the host, where the link is allowed) must not let write_file,
// its append or edit_file change that file; after the advised copy the
// workspace's own file is written.
func TestWriteFile_HardLink(t *testing.T) {
	ws, outside := workspace(t)
	hard := filepath.Join(ws, "hard.txt")
	require.NoError(t, os.Link(outside, hard))
	ctx := context.Background()
	calls := []struct {
		tool interface {
			Run(context.Context, []byte) (runtime.Result, error)
		}
		args string
	}{
		{&WriteFile{Workspace: ws}, `{"path":"hard.txt","content":"pwned"}`},
		{&WriteFile{Workspace: ws}, `{"path":"hard.txt","content":"pwned","append":true}`},
		{&EditFile{Workspace: ws}, `{"path":"hard.txt","old_string":"SECRET","new_string":"pwned"}`},
	}
	for _, c := range calls {
		res, err := c.tool.Run(ctx, []byte(c.args))
		require.NoError(t, err)
		assert.True(t, res.IsError, c.args)
		assert.Contains(t, res.Content, `"hard.txt" has other hard links, so it may be a file outside the workspace: copy it first (cp hard.txt hard.txt.new && mv hard.txt.new hard.txt)`)
		secret, _ := os.ReadFile(outside)
		assert.Equal(t, "TOP SECRET", string(secret), "the file outside was left as it was: %s", c.args)
	}

	require.NoError(t, os.Remove(outside)) // now hard.txt is the only link
	res, err := (&EditFile{Workspace: ws}).Run(ctx, []byte(`{"path":"hard.txt","old_string":"SECRET","new_string":"public"}`))
	require.NoError(t, err)
	assert.False(t, res.IsError, res.Content)
	data, _ := os.ReadFile(hard)
	assert.Equal(t, "TOP public", string(data))
}
