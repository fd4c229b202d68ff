package workers

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzWorkFSRel: whatever path an agent names, what it maps to stays in
// the folder.
func FuzzWorkFSRel(f *testing.F) {
	for _, s := range []string{"/w/a", "/w/../x", "/w", "a/b", "/w/./b/../../c", "/wx/a", "//w/a", "/w/a/../../w/b"} {
		f.Add(s)
	}
	w := &workFS{inside: "/w"}
	f.Fuzz(func(t *testing.T, p string) {
		r, err := w.rel(p)
		if err != nil {
			return
		}
		assert.False(t, filepath.IsAbs(r), r)
		assert.False(t, r == ".." || strings.HasPrefix(r, "../"), r)
	})
}

// A named pipe in the folder neither hangs a read nor a write, and big
// files are refused with what to do instead.
func TestWorkFS_NotRegular(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big"), make([]byte, maxFileBytes+1), 0o600))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	w := &workFS{root: root, inside: "/in"}
	_, err = w.read(acp.ReadTextFileRequest{Path: "/in/fifo"})
	assert.ErrorContains(t, err, "not a regular file")
	_, err = w.write(acp.WriteTextFileRequest{Path: "/in/fifo", Content: "x"})
	assert.Error(t, err)
	_, err = w.read(acp.ReadTextFileRequest{Path: "/in/big"})
	assert.ErrorContains(t, err, "read it with a shell command instead")
	_, err = w.write(acp.WriteTextFileRequest{Path: "/in/new", Content: strings.Repeat("x", maxFileBytes+1)})
	assert.ErrorContains(t, err, "write it with a shell command instead")
	_, err = w.write(acp.WriteTextFileRequest{Path: "/in", Content: "x"})
	assert.ErrorContains(t, err, "name a file in it")
}
