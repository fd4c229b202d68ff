package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxReadBytes caps what read_file reads of one file.
const maxReadBytes = 256 << 10

// decodeArgs decodes a call's JSON arguments into v; empty means {}.
func decodeArgs(args []byte, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

// cleanPath turns what the model gave into a path relative to the
// workspace root. os.Root refuses anything that still escapes.
func cleanPath(p string) string {
	p = strings.TrimSpace(p)
	p = strings.TrimPrefix(p, "/workspace")
	p = strings.TrimLeft(p, "/")
	if p == "" {
		return "."
	}
	return path.Clean(p)
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
	}
	return runtime.ErrorResult(fmt.Sprintf("error: %s %q: %v", op, p, err))
}

// ReadFile reads a text file in the workspace.
type ReadFile struct{ Workspace string }

var _ runtime.Tool = (*ReadFile)(nil)

type readFileArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

const readFileSchema = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"File path relative to the workspace"},` +
	`"offset":{"type":"integer","description":"First line to read, counting from 1 (default 1)"},` +
	`"limit":{"type":"integer","description":"How many lines to read (default: all)"}},` +
	`"required":["path"],"additionalProperties":false}`

// Spec describes read_file to the model.
func (t *ReadFile) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{
		Name:        "read_file",
		Description: "Read a text file from your workspace. Optionally give offset and limit to read a range of lines.",
		Schema:      []byte(readFileSchema),
	}
}

// Run reads the file.
func (t *ReadFile) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a readFileArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("error: read_file: " + err.Error()), nil
	}
	if a.Path == "" {
		return runtime.ErrorResult("error: read_file: path is required"), nil
	}
	root, err := os.OpenRoot(t.Workspace)
	if err != nil {
		return runtime.Result{}, fmt.Errorf("open workspace: %w", err)
	}
	defer root.Close()
	p := cleanPath(a.Path)
	f, err := root.Open(p)
	if err != nil {
		return fsError("read_file", a.Path, err), nil
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return runtime.ErrorResult(fmt.Sprintf("error: read_file: %q is a directory; use list_dir", a.Path)), nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxReadBytes+1))
	if err != nil {
		return fsError("read_file", a.Path, err), nil
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return runtime.ErrorResult(fmt.Sprintf("error: read_file: %q is a binary file", a.Path)), nil
	}
	cut := len(data) > maxReadBytes
	if cut {
		data = data[:maxReadBytes]
	}
	text := selectLines(string(data), a.Offset, a.Limit)
	if cut {
		text += fmt.Sprintf("\n[... the file is longer than %d KiB; read further with offset ...]", maxReadBytes>>10)
	}
	return runtime.Result{Content: text}, nil
}

// selectLines returns lines offset..offset+limit-1 (1-based); zero values
// mean from the start and to the end.
func selectLines(text string, offset, limit int) string {
	if offset <= 1 && limit <= 0 {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	start := max(offset-1, 0)
	if start >= len(lines) {
		return fmt.Sprintf("[the file has only %d lines]", len(lines))
	}
	end := len(lines)
	if limit > 0 {
		end = min(start+limit, end)
	}
	return strings.Join(lines[start:end], "")
}

// Subject is what policies match: the path.
func (t *ReadFile) Subject(args []byte) string {
	var a readFileArgs
	_ = decodeArgs(args, &a)
	return a.Path
}
