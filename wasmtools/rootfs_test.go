package wasmtools

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

func mustRootFS(t *testing.T, dir string, readOnly bool) *rootFS {
	t.Helper()
	r, err := openRootFS(dir, readOnly)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.root.Close() })
	return r
}

// readAll reads name through r, or returns the errno.
func readAll(r *rootFS, name string) (string, experimentalsys.Errno) {
	f, errno := r.OpenFile(name, experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		return "", errno
	}
	defer f.Close()
	var out []byte
	buf := make([]byte, 64)
	for {
		n, errno := f.Read(buf)
		out = append(out, buf[:n]...)
		if errno != 0 || n == 0 {
			return string(out), errno
		}
	}
}

// TestRootFS_Escapes calls the file system as wazero would, but with
// names wazero would have cleaned too: the refusal must not depend on it.
func TestRootFS_Escapes(t *testing.T) {
	w := newEscapeWorld(t)
	require.NoError(t, os.WriteFile(filepath.Join(w.outside, "later.txt"), []byte(secretText), 0o644))
	for _, readOnly := range []bool{true, false} {
		r := mustRootFS(t, w.ws, readOnly)
		for _, name := range []string{"abs", "sub/rel", "dirlink/secret.txt", "updir/secret.txt", "dangling",
			"../outside/secret.txt", "sub/../../outside/secret.txt", "/../outside/secret.txt", "dirlink/"} {
			got, errno := readAll(r, name)
			assert.NotZero(t, errno, "read %s", name)
			assert.NotContains(t, got, secretText)
			_, errno = r.Stat(name)
			assert.NotZero(t, errno, "stat %s", name)
		}
		_, errno := r.Lstat("abs") // the link itself is in the workspace
		assert.Zero(t, errno)
		target, errno := r.Readlink("abs")
		assert.Zero(t, errno)
		assert.Equal(t, filepath.Join(w.outside, "secret.txt"), target)
		_, errno = r.Readlink("dirlink/secret.txt")
		assert.NotZero(t, errno)
	}
	require.NoError(t, os.Remove(filepath.Join(w.outside, "later.txt")))
	r := mustRootFS(t, w.ws, false)
	for name, errno := range map[string]experimentalsys.Errno{
		"mkdir":   r.Mkdir("dirlink/new", 0o755),
		"rename":  r.Rename("inside.txt", "updir/moved.txt"),
		"rename2": r.Rename("dirlink/victim.txt", "stolen.txt"),
		"unlink":  r.Unlink("dirlink/victim.txt"),
		"rmdir":   r.Rmdir("dirlink/"),
		"link":    r.Link("dirlink/victim.txt", "stolen.txt"),
		"link2":   r.Link("inside.txt", "dirlink/linked.txt"),
		"chmod":   r.Chmod("victim", 0o777),
		"utimens": r.Utimens("victim", 0, 0),
		"symlink": r.Symlink("inside.txt", "dirlink/planted"),
	} {
		assert.NotZero(t, errno, name)
	}
	for _, flag := range []experimentalsys.Oflag{experimentalsys.O_WRONLY, experimentalsys.O_RDWR | experimentalsys.O_CREAT,
		experimentalsys.O_WRONLY | experimentalsys.O_TRUNC, experimentalsys.O_RDWR | experimentalsys.O_APPEND} {
		for _, name := range []string{"victim", "hard", "dangling", "dirlink/victim.txt", "dirlink/new.txt"} {
			f, errno := r.OpenFile(name, flag, 0o644)
			if errno == 0 {
				_ = f.Close()
			}
			assert.NotZero(t, errno, "open %s with %#x", name, flag)
		}
	}
	w.assertOutsideUntouched(t)
	fi, err := os.Stat(filepath.Join(w.outside, "victim.txt"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o644), fi.Mode().Perm())
}

// TestRootFS_Race swaps a folder for a symlink to the outside and back
// 2,000 times while two readers open a file through it.
func TestRootFS_Race(t *testing.T) {
	w := newEscapeWorld(t)
	r := mustRootFS(t, w.ws, true)
	flip, real := filepath.Join(w.ws, "flip"), filepath.Join(w.ws, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "secret.txt"), []byte("inside"), 0o644))
	var done atomic.Bool
	var leaked, inside atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for !done.Load() {
				got, errno := readAll(r, "flip/secret.txt")
				switch {
				case got == secretText:
					leaked.Add(1)
				case errno == 0:
					inside.Add(1)
				}
			}
		})
	}
	for range 2000 {
		_ = os.Rename(real, flip)
		_ = os.Rename(flip, real)
		_ = os.Symlink(w.outside, flip)
		_ = os.Remove(flip)
	}
	done.Store(true)
	wg.Wait()
	assert.Zero(t, leaked.Load(), "a read through the swapped folder saw the secret")
	t.Logf("%d reads saw the folder inside", inside.Load())
}

func TestRootFS_ReadOnly(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("keep"), 0o644))
	r := mustRootFS(t, ws, true)
	// wazero's own read-only mount lets O_CREAT and O_TRUNC through with
	// O_RDONLY, which WASI asks for when the guest wants no write right.
	for _, flag := range []experimentalsys.Oflag{experimentalsys.O_RDONLY | experimentalsys.O_CREAT,
		experimentalsys.O_RDONLY | experimentalsys.O_TRUNC, experimentalsys.O_WRONLY, experimentalsys.O_RDWR,
		experimentalsys.O_RDONLY | experimentalsys.O_APPEND} {
		for _, name := range []string{"a.txt", "new.txt"} {
			_, errno := r.OpenFile(name, flag, 0o644)
			assert.Equal(t, experimentalsys.EROFS, errno, "%s %#x", name, flag)
		}
	}
	for name, errno := range map[string]experimentalsys.Errno{
		"mkdir": r.Mkdir("d", 0o755), "rename": r.Rename("a.txt", "b.txt"), "unlink": r.Unlink("a.txt"),
		"rmdir": r.Rmdir("."), "link": r.Link("a.txt", "b.txt"), "symlink": r.Symlink("a.txt", "b.txt"),
		"chmod": r.Chmod("a.txt", 0o600), "utimens": r.Utimens("a.txt", 0, 0),
	} {
		assert.Equal(t, experimentalsys.EROFS, errno, name)
	}
	f, errno := r.OpenFile("a.txt", experimentalsys.O_RDONLY, 0)
	require.Zero(t, errno)
	defer f.Close()
	_, errno = f.Write([]byte("x"))
	assert.Equal(t, experimentalsys.EBADF, errno)
	assert.NotZero(t, f.Truncate(0))
	assert.Equal(t, experimentalsys.EROFS, f.Utimens(0, 0))
	data, err := os.ReadFile(filepath.Join(ws, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "keep", string(data))
	entries, err := os.ReadDir(ws)
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}

// TestRootFS_HardLinks: a file with another link may be read but never
// changed, since the other link may be outside the workspace.
func TestRootFS_HardLinks(t *testing.T) {
	w := newEscapeWorld(t)
	r := mustRootFS(t, w.ws, false)
	got, errno := readAll(r, "hard")
	assert.Zero(t, errno)
	assert.Equal(t, victimText, got)
	for _, flag := range []experimentalsys.Oflag{experimentalsys.O_WRONLY, experimentalsys.O_RDWR,
		experimentalsys.O_WRONLY | experimentalsys.O_TRUNC, experimentalsys.O_WRONLY | experimentalsys.O_APPEND} {
		_, errno := r.OpenFile("hard", flag, 0)
		assert.Equal(t, experimentalsys.EPERM, errno, "%#x", flag)
	}
	assert.Equal(t, experimentalsys.EPERM, r.Chmod("hard", 0o600))
	assert.Equal(t, experimentalsys.EPERM, r.Utimens("hard", 0, 0))
	w.assertOutsideUntouched(t)
	// Its name is the workspace's own: it may go.
	assert.Zero(t, r.Rename("hard", "hard2"))
	assert.Zero(t, r.Unlink("hard2"))
	w.assertOutsideUntouched(t)
}

// TestRootFS_Special: a FIFO (or anything but a file or a folder) is
// refused at once, never opened to block.
func TestRootFS_Special(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644))
	r := mustRootFS(t, ws, false)
	for _, flag := range []experimentalsys.Oflag{experimentalsys.O_RDONLY, experimentalsys.O_RDWR} {
		_, errno := r.OpenFile("pipe", flag, 0)
		assert.Equal(t, experimentalsys.ENOTSUP, errno)
	}
	_, errno := r.OpenFile("pipe", experimentalsys.O_WRONLY, 0) // no reader: the kernel says ENXIO
	assert.NotZero(t, errno)
}

func TestRootFS_Symlink(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a"), 0o644))
	r := mustRootFS(t, ws, false)
	for target, link := range map[string]string{"/etc/passwd": "l1", "../x": "l2", "../../x": "sub/l3",
		"sub/../../x": "l4", "": "l5"} {
		assert.Equal(t, experimentalsys.EPERM, r.Symlink(target, link), "%s -> %s", link, target)
		assert.NoFileExists(t, filepath.Join(ws, link))
	}
	require.Zero(t, r.Symlink("../a.txt", "sub/up"))
	require.Zero(t, r.Symlink("a.txt", "same"))
	got, errno := readAll(r, "sub/up")
	assert.Zero(t, errno)
	assert.Equal(t, "a", got)
	target, errno := r.Readlink("sub/up")
	assert.Zero(t, errno)
	assert.Equal(t, "../a.txt", target)
	f, errno := r.OpenFile("same", experimentalsys.O_RDONLY|experimentalsys.O_NOFOLLOW, 0)
	if errno == 0 {
		_ = f.Close()
	}
	assert.Equal(t, experimentalsys.ELOOP, errno)
}

// TestRootFS_Files: the operations tools use, inside the workspace.
func TestRootFS_Files(t *testing.T) {
	ws := t.TempDir()
	r := mustRootFS(t, ws, false)
	require.Zero(t, r.Mkdir("d", 0o755))
	assert.Equal(t, experimentalsys.EEXIST, r.Mkdir("d", 0o755))
	assert.Equal(t, experimentalsys.ENOENT, r.Mkdir("missing/d", 0o755))
	f, errno := r.OpenFile("d/f.txt", experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_EXCL, 0o600)
	require.Zero(t, errno)
	_, errno = r.OpenFile("d/f.txt", experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_EXCL, 0o600)
	assert.Equal(t, experimentalsys.EEXIST, errno)
	n, errno := f.Write([]byte("hello world"))
	assert.Equal(t, 11, n)
	assert.Zero(t, errno)
	n, errno = f.Pwrite([]byte("W"), 6)
	assert.Equal(t, 1, n)
	assert.Zero(t, errno)
	off, errno := f.Seek(0, io.SeekStart)
	assert.Zero(t, off)
	assert.Zero(t, errno)
	buf := make([]byte, 5)
	n, errno = f.Pread(buf, 6)
	assert.Equal(t, "World", string(buf[:n]))
	assert.Zero(t, errno)
	_, errno = f.Pread(buf, -1)
	assert.Equal(t, experimentalsys.EINVAL, errno)
	assert.Zero(t, f.Truncate(5))
	assert.Equal(t, experimentalsys.EINVAL, f.Truncate(-1))
	assert.Zero(t, f.Sync())
	assert.Zero(t, f.Datasync())
	require.Zero(t, f.SetAppend(true))
	assert.True(t, f.IsAppend())
	_, errno = f.Write([]byte("!"))
	assert.Zero(t, errno)
	assert.Zero(t, f.Utimens(1e9, experimentalsys.UTIME_OMIT))
	st, errno := f.Stat()
	assert.Zero(t, errno)
	assert.Equal(t, int64(6), st.Size)
	assert.Equal(t, int64(1e9), st.Atim)
	assert.Zero(t, f.Close())
	assert.Zero(t, f.Close())
	_, errno = f.Read(buf)
	assert.Equal(t, experimentalsys.EBADF, errno)
	got, _ := readAll(r, "d/f.txt")
	assert.Equal(t, "hello!", got)

	dir, errno := r.OpenFile("d", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	require.Zero(t, errno)
	isDir, _ := dir.IsDir()
	assert.True(t, isDir)
	_, errno = dir.Read(buf)
	assert.Equal(t, experimentalsys.EISDIR, errno)
	require.Zero(t, r.Symlink("f.txt", "d/link"))
	dirents, errno := dir.Readdir(-1)
	require.Zero(t, errno)
	assert.ElementsMatch(t, []experimentalsys.Dirent{{Name: "f.txt", Type: 0}, {Name: "link", Type: fs.ModeSymlink}},
		withoutIno(dirents))
	assert.Zero(t, dir.Close())
	_, errno = r.OpenFile("d/f.txt", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	assert.Equal(t, experimentalsys.ENOTDIR, errno)
	_, errno = r.OpenFile("d", experimentalsys.O_WRONLY, 0)
	assert.Equal(t, experimentalsys.EISDIR, errno)

	require.Zero(t, r.Link("d/f.txt", "d/g.txt"))
	require.Zero(t, r.Rename("d/g.txt", "g.txt"))
	assert.Equal(t, experimentalsys.EISDIR, r.Unlink("d"))
	assert.Equal(t, experimentalsys.ENOTDIR, r.Rmdir("g.txt"))
	assert.Equal(t, experimentalsys.ENOTEMPTY, r.Rmdir("d"))
	for _, name := range []string{"g.txt", "d/f.txt", "d/link"} {
		assert.Zero(t, r.Unlink(name), name)
	}
	assert.Zero(t, r.Rmdir("d"))
	assert.Equal(t, experimentalsys.ENOENT, r.Unlink("d"))
	assert.Zero(t, r.Chmod(".", 0o755))
}

func withoutIno(d []experimentalsys.Dirent) []experimentalsys.Dirent {
	out := make([]experimentalsys.Dirent, len(d))
	for i, e := range d {
		out[i] = experimentalsys.Dirent{Name: e.Name, Type: e.Type}
	}
	return out
}

func TestToErrno(t *testing.T) {
	root, err := os.OpenRoot(t.TempDir())
	require.NoError(t, err)
	defer root.Close()
	_, escapeErr := root.Open("../x")
	require.Error(t, escapeErr)
	cases := []struct {
		err  error
		want experimentalsys.Errno
	}{
		{nil, 0},
		{io.EOF, 0},
		{escapeErr, experimentalsys.EPERM},
		{&fs.PathError{Op: "openat", Path: "x", Err: syscall.ENOENT}, experimentalsys.ENOENT},
		{&os.LinkError{Op: "linkat", Old: "a", New: "b", Err: syscall.EEXIST}, experimentalsys.EEXIST},
		{fmtWrap(syscall.ELOOP), experimentalsys.ELOOP},
		{syscall.EIO, experimentalsys.EIO},
		{syscall.EXDEV, experimentalsys.EIO},
		{os.ErrClosed, experimentalsys.EBADF},
		{fs.ErrPermission, experimentalsys.EPERM},
		{errors.New("something else"), experimentalsys.EPERM},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, toErrno(c.err), "%v", c.err)
	}
}

func fmtWrap(err error) error {
	return &fs.PathError{Op: "op", Path: "p", Err: &os.SyscallError{Syscall: "s", Err: err}}
}

// TestRootFS_SymlinkThroughLink: a link's ".." climbs from where its
// folder really is, so a folder reached through a symlink is not as deep
// as its name says. a/b/s -> ../.. is the root itself; a link at a/b/s/x
// climbing three levels would lead out.
func TestRootFS_SymlinkThroughLink(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "a", "b"), 0o755))
	r := mustRootFS(t, ws, false)
	require.Zero(t, r.Symlink("../..", "a/b/s"))
	for target, link := range map[string]string{"../../..": "a/b/s/x", "..": "a/b/s/y",
		"s/../../../..": "a/b/z", "a/../..": "w"} {
		assert.Equal(t, experimentalsys.EPERM, r.Symlink(target, link), "%s -> %s", link, target)
		_, err := os.Lstat(filepath.Join(ws, link))
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s was made", link)
	}
	require.Zero(t, r.Symlink("a/b", "a/b/s/up"), "a target without .. needs no walk")
	require.Zero(t, r.Symlink("../../a", "a/b/down"))
	target, errno := r.Readlink("a/b/down")
	assert.Zero(t, errno)
	assert.Equal(t, "../../a", target)
}
