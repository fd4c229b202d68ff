package tools

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"syscall"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxWriteBytes caps what one write_file or edit_file may write.
const maxWriteBytes = 4 << 20

// WriteFile creates or replaces a file in the workspace.
type WriteFile struct{ Workspace string }

var _ runtime.Tool = (*WriteFile)(nil)

type writeFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Append  bool   `json:"append"`
}

const writeFileSchema = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"File path relative to the workspace; missing folders are created"},` +
	`"content":{"type":"string","description":"The whole new content of the file"},` +
	`"append":{"type":"boolean","description":"Add to the end of the file instead of replacing it"}},` +
	`"required":["path","content"],"additionalProperties":false}`

// Spec describes write_file to the model.
func (t *WriteFile) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{
		Name:        "write_file",
		Description: "Create or overwrite a file in your workspace (or append to it), up to 4 MiB per call. Folders are created as needed.",
		Schema:      []byte(writeFileSchema),
	}
}

// Subject is what policies match: the path relative to the workspace, as
// it will be opened.
func (t *WriteFile) Subject(args []byte) string {
	var a writeFileArgs
	_ = decodeArgs(args, &a)
	return cleanPath(t.Workspace, a.Path)
}

// Run writes the file.
func (t *WriteFile) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a writeFileArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("error: write_file: " + err.Error()), nil
	}
	if a.Path == "" {
		return runtime.ErrorResult("error: write_file: path is required"), nil
	}
	if len(a.Content) > maxWriteBytes {
		return runtime.ErrorResult(fmt.Sprintf("error: write_file: content is larger than %d MiB", maxWriteBytes>>20)), nil
	}
	root, refused, err := openWorkspace(ctx, t.Workspace, true)
	if root == nil {
		return refused, err
	}
	defer root.Close()
	p := cleanPath(t.Workspace, a.Path)
	if dir := path.Dir(p); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fsError("write_file", a.Path, err), nil
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if a.Append {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	if err := writeRegular(root, p, flags, []byte(a.Content)); err != nil {
		return fsError("write_file", a.Path, err), nil
	}
	verb := "wrote"
	if a.Append {
		verb = "appended"
	}
	return runtime.Result{Content: fmt.Sprintf("%s %d bytes to %s", verb, len(a.Content), p)}, nil
}

// EditFile replaces exact text in a file of the workspace.
type EditFile struct{ Workspace string }

var _ runtime.Tool = (*EditFile)(nil)

type editFileArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

const editFileSchema = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"File path relative to the workspace"},` +
	`"old_string":{"type":"string","description":"The exact text to replace, including whitespace; it must occur once unless replace_all is true"},` +
	`"new_string":{"type":"string","description":"The text to put in its place"},` +
	`"replace_all":{"type":"boolean","description":"Replace every occurrence"}},` +
	`"required":["path","old_string","new_string"],"additionalProperties":false}`

// Spec describes edit_file to the model.
func (t *EditFile) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{
		Name:        "edit_file",
		Description: "Replace exact text in a file of your workspace (files up to 4 MiB). old_string must match exactly once, unless replace_all is set.",
		Schema:      []byte(editFileSchema),
	}
}

// Subject is what policies match: the path relative to the workspace, as
// it will be opened.
func (t *EditFile) Subject(args []byte) string {
	var a editFileArgs
	_ = decodeArgs(args, &a)
	return cleanPath(t.Workspace, a.Path)
}

// Run edits the file. The file's size is checked on the open descriptor
// before it is read, and the size of the result is computed from the
// number of matches before it is built: a file or a replacement too large
// for memory is refused, never attempted.
func (t *EditFile) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a editFileArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("error: edit_file: " + err.Error()), nil
	}
	if a.Path == "" || a.OldString == "" {
		return runtime.ErrorResult("error: edit_file: path and old_string are required"), nil
	}
	if len(a.NewString) > maxWriteBytes {
		return runtime.ErrorResult(fmt.Sprintf("error: edit_file: new_string is larger than %d MiB; write the file with write_file in parts instead", maxWriteBytes>>20)), nil
	}
	root, refused, err := openWorkspace(ctx, t.Workspace, true)
	if root == nil {
		return refused, err
	}
	defer root.Close()
	p := cleanPath(t.Workspace, a.Path)
	data, res, ok := readForEdit(root, p, a.Path)
	if !ok {
		return res, nil
	}
	n := bytes.Count(data, []byte(a.OldString))
	switch {
	case n == 0:
		return runtime.ErrorResult(fmt.Sprintf("error: edit_file: old_string was not found in %s; read the file and copy the text exactly", p)), nil
	case n > 1 && !a.ReplaceAll:
		return runtime.ErrorResult(fmt.Sprintf("error: edit_file: old_string occurs %d times in %s; add surrounding lines to make it unique, or set replace_all", n, p)), nil
	}
	// n <= 4 Mi and both strings are under 4 MiB (old_string is in the
	// file), so the product fits an int64 with room to spare.
	size := int64(len(data)) + int64(n)*(int64(len(a.NewString))-int64(len(a.OldString)))
	if size > maxWriteBytes {
		return runtime.ErrorResult(fmt.Sprintf("error: edit_file: replacing %d occurrence(s) would make %s %d MiB, larger than the %d MiB edit_file writes; make a smaller change or use bash (sed)",
			n, p, size>>20, maxWriteBytes>>20)), nil
	}
	out := bytes.Replace(data, []byte(a.OldString), []byte(a.NewString), n)
	if err := writeRegular(root, p, os.O_WRONLY|os.O_TRUNC, out); err != nil {
		return fsError("edit_file", a.Path, err), nil
	}
	return runtime.Result{Content: fmt.Sprintf("replaced %d occurrence(s) in %s", n, p)}, nil
}

// readForEdit reads a regular file of at most maxWriteBytes; otherwise it
// returns the error result to give.
func readForEdit(root *os.Root, p, shown string) ([]byte, runtime.Result, bool) {
	f, st, err := openRegular(root, p, os.O_RDONLY, 0)
	if err != nil {
		return nil, fsError("edit_file", shown, err), false
	}
	defer f.Close()
	tooBig := runtime.ErrorResult(fmt.Sprintf("error: edit_file: %s is larger than the %d MiB edit_file handles; change it with bash (e.g. sed) instead",
		p, maxWriteBytes>>20))
	if st.Size() > maxWriteBytes {
		return nil, tooBig, false
	}
	buf := bytes.NewBuffer(make([]byte, 0, st.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, maxWriteBytes+1)); err != nil {
		return nil, fsError("edit_file", shown, err), false
	}
	if buf.Len() > maxWriteBytes { // it grew since the fstat
		return nil, tooBig, false
	}
	return buf.Bytes(), runtime.Result{}, true
}

// writeRegular writes data to p, which must be (or, with O_CREATE, become)
// a regular file: a FIFO or device in its place is refused without
// blocking. So is a file with other hard links, as the WASM tools' file
// system does: a link made on the host may name a file outside the
// workspace, and writing through it would change that file. The check is
// made on the opened descriptor, and O_TRUNC is applied only after it, so
// a refused file is left as it was.
func writeRegular(root *os.Root, p string, flag int, data []byte) error {
	f, st, err := openRegular(root, p, flag&^os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	err = errHardLinked
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink <= 1 {
		err = nil
	}
	if err == nil && flag&os.O_TRUNC != 0 {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
