package workers

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/coder/acp-go-sdk"
)

// maxFileBytes bounds a file the agent reads or writes through the
// client: its own tools (a shell) are what it has for bigger ones.
const maxFileBytes = 1 << 20

// workFS answers fs/read_text_file and fs/write_text_file inside the
// job's folder alone: paths are the agent's (under inside), and os.Root
// refuses any that leaves the folder, through ".." or a symlink.
type workFS struct {
	root   *os.Root
	inside string // where the folder appears to the agent
}

// rel turns the agent's absolute path into one relative to the folder.
func (w *workFS) rel(p string) (string, error) {
	if !path.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path: give the file's full path under %s", p, w.inside)
	}
	r, err := filepath.Rel(w.inside, path.Clean(p))
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", fmt.Errorf("%s is outside the folder this worker may use (%s): work under it", p, w.inside)
	}
	return r, nil
}

func (w *workFS) read(req acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	r, err := w.rel(req.Path)
	if err != nil {
		return acp.ReadTextFileResponse{}, acp.NewInvalidParams(err.Error())
	}
	// O_NONBLOCK: a named pipe the agent made must not hang the read.
	f, err := w.root.OpenFile(r, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return acp.ReadTextFileResponse{}, fsErr(req.Path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return acp.ReadTextFileResponse{}, acp.NewInvalidParams(fmt.Sprintf("%s is not a regular file: read files only", req.Path))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return acp.ReadTextFileResponse{}, fsErr(req.Path, err)
	}
	if len(b) > maxFileBytes {
		return acp.ReadTextFileResponse{}, acp.NewInvalidParams(fmt.Sprintf(
			"%s is larger than %d KiB: read it with a shell command instead", req.Path, maxFileBytes>>10))
	}
	return acp.ReadTextFileResponse{Content: lines(string(b), req.Line, req.Limit)}, nil
}

// lines is content from the 1-based line for limit lines (nil: all).
func lines(content string, line, limit *int) string {
	if line == nil && limit == nil {
		return content
	}
	ls := strings.SplitAfter(content, "\n")
	start := 0
	if line != nil && *line > 1 {
		start = min(*line-1, len(ls))
	}
	end := len(ls)
	if limit != nil && *limit >= 0 && start+*limit < end {
		end = start + *limit
	}
	return strings.Join(ls[start:end], "")
}

func (w *workFS) write(req acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	r, err := w.rel(req.Path)
	if err != nil {
		return acp.WriteTextFileResponse{}, acp.NewInvalidParams(err.Error())
	}
	if r == "." {
		return acp.WriteTextFileResponse{}, acp.NewInvalidParams(fmt.Sprintf("%s is the folder itself: name a file in it", req.Path))
	}
	if len(req.Content) > maxFileBytes {
		return acp.WriteTextFileResponse{}, acp.NewInvalidParams(fmt.Sprintf(
			"the content for %s is larger than %d KiB: write it with a shell command instead", req.Path, maxFileBytes>>10))
	}
	if d := filepath.Dir(r); d != "." {
		if err := w.root.MkdirAll(d, 0o755); err != nil {
			return acp.WriteTextFileResponse{}, fsErr(req.Path, err)
		}
	}
	f, err := w.root.OpenFile(r, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return acp.WriteTextFileResponse{}, fsErr(req.Path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return acp.WriteTextFileResponse{}, acp.NewInvalidParams(fmt.Sprintf("%s is not a regular file: write files only", req.Path))
	}
	if _, err := f.WriteString(req.Content); err != nil {
		return acp.WriteTextFileResponse{}, fsErr(req.Path, err)
	}
	return acp.WriteTextFileResponse{}, nil
}

func fsErr(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return acp.NewInvalidParams(fmt.Sprintf("%s does not exist: check the path", p))
	case strings.Contains(err.Error(), "path escapes"):
		return acp.NewInvalidParams(fmt.Sprintf("%s leads outside the folder this worker may use: work under it", p))
	}
	return acp.NewInternalError(fmt.Sprintf("%s: %v", p, errors.Unwrap(err)))
}
