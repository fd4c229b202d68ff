package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// errNotRegular is returned for a path that names a named pipe, a device
// or a socket. Opening one for reading can block forever (a FIFO with no
// writer) or never end (/dev/zero), so file tools refuse them.
var errNotRegular = errors.New("not a regular file")

// errIsDir is returned when a file tool that reads or writes files is
// given a directory.
var errIsDir = errors.New("is a directory")

// errHardLinked is returned by a write to a regular file with more than
// one link: another link may name it from outside the workspace.
var errHardLinked = errors.New("has other hard links")

// errNotDir is returned when a tool that lists a directory is given
// something else.
var errNotDir = errors.New("not a directory")

// openRegular opens p inside root and returns it only if it is a regular
// file. The open itself never blocks: O_NONBLOCK makes opening a FIFO
// return at once (or fail with ENXIO when writing to one nobody reads),
// and the check is made on the opened descriptor (fstat), so a regular
// file swapped for a FIFO between a check and the open cannot slip
// through. O_NONBLOCK changes nothing for reads and writes of regular
// files.
func openRegular(root *os.Root, p string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(p, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, perm)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ENODEV) {
			return nil, nil, errNotRegular // a socket, or a FIFO opened for writing with no reader
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, nil, err
	case st.IsDir():
		f.Close()
		return nil, nil, errIsDir
	case !st.Mode().IsRegular():
		f.Close()
		return nil, nil, errNotRegular
	}
	return f, st, nil
}

// openDir opens the directory p inside root. O_DIRECTORY makes the open
// fail at once, without blocking, when p is anything else (a FIFO swapped
// in for a directory included).
func openDir(root *os.Root, p string) (*os.File, error) {
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ENOTDIR) {
		return nil, errNotDir
	}
	return f, err
}

// cleanPath turns what the model gave into the path relative to the
// workspace root that the tool opens: "/workspace/x" (the path inside the
// sandbox) and the workspace's own absolute path on the host both become
// "x", other absolute paths are taken as relative to the workspace, and
// "." and ".." are resolved lexically. The same function gives the
// subject policies match, so a rule sees the path that is opened.
// os.Root refuses anything that still escapes.
func cleanPath(workspace, p string) string {
	p = strings.TrimSpace(p)
	if workspace != "" {
		if ws := filepath.Clean(workspace); ws != "/" {
			p = trimDir(p, filepath.ToSlash(ws))
		}
	}
	p = trimDir(p, "/workspace")
	p = strings.TrimLeft(p, "/")
	if p == "" {
		return "."
	}
	return path.Clean(p) // a leading .. stays, for os.Root to refuse
}

// trimDir removes the folder dir from the front of p when p is dir or lies
// under it.
func trimDir(p, dir string) string {
	if p == dir {
		return ""
	}
	if rest, ok := strings.CutPrefix(p, dir+"/"); ok {
		return rest
	}
	return p
}

// fsError is the sentence the model sees for a failed file operation.
func fsError(op, p string, err error) runtime.Result {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return runtime.ErrorResult(fmt.Sprintf("error: %s: %q does not exist in the workspace", op, p))
	case errors.Is(err, fs.ErrInvalid), strings.Contains(err.Error(), "path escapes from parent"):
		return runtime.ErrorResult(fmt.Sprintf("error: %s: %q is outside the workspace; use a path relative to the workspace", op, p))
	case errors.Is(err, fs.ErrPermission):
		return runtime.ErrorResult(fmt.Sprintf("error: %s: permission denied for %q", op, p))
	case errors.Is(err, errNotRegular):
		return runtime.ErrorResult(fmt.Sprintf("error: %s: %q is a named pipe, device or socket, not a regular file; file tools only work on regular files", op, p))
	case errors.Is(err, errHardLinked):
		return runtime.ErrorResult(fmt.Sprintf("error: %s: %q has other hard links, so it may be a file outside the workspace: copy it first (cp %s %s.new && mv %s.new %s)",
			op, p, p, p, p, p))
	case errors.Is(err, errIsDir):
		return runtime.ErrorResult(fmt.Sprintf("error: %s: %q is a directory; use list_dir", op, p))
	case errors.Is(err, errNotDir):
		return runtime.ErrorResult(fmt.Sprintf("error: %s: %q is not a directory; use read_file for a file", op, p))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return runtime.ErrorResult(fmt.Sprintf("error: %s: stopped before the end: the call was cancelled or ran out of time", op))
	}
	return runtime.ErrorResult(fmt.Sprintf("error: %s %q: %v", op, p, err))
}
