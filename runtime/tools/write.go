package tools

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"

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
		Description: "Create or overwrite a file in your workspace (or append to it). Folders are created as needed.",
		Schema:      []byte(writeFileSchema),
	}
}

// Subject is what policies match: the path.
func (t *WriteFile) Subject(args []byte) string {
	var a writeFileArgs
	_ = decodeArgs(args, &a)
	return a.Path
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
	root, err := os.OpenRoot(t.Workspace)
	if err != nil {
		return runtime.Result{}, fmt.Errorf("open workspace: %w", err)
	}
	defer root.Close()
	p := cleanPath(a.Path)
	if dir := path.Dir(p); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fsError("write_file", a.Path, err), nil
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if a.Append {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := root.OpenFile(p, flags, 0o644)
	if err != nil {
		return fsError("write_file", a.Path, err), nil
	}
	_, werr := f.WriteString(a.Content)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fsError("write_file", a.Path, werr), nil
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
		Description: "Replace exact text in a file of your workspace. old_string must match exactly once, unless replace_all is set.",
		Schema:      []byte(editFileSchema),
	}
}

// Subject is what policies match: the path.
func (t *EditFile) Subject(args []byte) string {
	var a editFileArgs
	_ = decodeArgs(args, &a)
	return a.Path
}

// Run edits the file.
func (t *EditFile) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a editFileArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("error: edit_file: " + err.Error()), nil
	}
	if a.Path == "" || a.OldString == "" {
		return runtime.ErrorResult("error: edit_file: path and old_string are required"), nil
	}
	root, err := os.OpenRoot(t.Workspace)
	if err != nil {
		return runtime.Result{}, fmt.Errorf("open workspace: %w", err)
	}
	defer root.Close()
	p := cleanPath(a.Path)
	data, err := root.ReadFile(p)
	if err != nil {
		return fsError("edit_file", a.Path, err), nil
	}
	text := string(data)
	n := strings.Count(text, a.OldString)
	switch {
	case n == 0:
		return runtime.ErrorResult(fmt.Sprintf("error: edit_file: old_string was not found in %s; read the file and copy the text exactly", p)), nil
	case n > 1 && !a.ReplaceAll:
		return runtime.ErrorResult(fmt.Sprintf("error: edit_file: old_string occurs %d times in %s; add surrounding lines to make it unique, or set replace_all", n, p)), nil
	}
	if a.ReplaceAll {
		text = strings.ReplaceAll(text, a.OldString, a.NewString)
	} else {
		text = strings.Replace(text, a.OldString, a.NewString, 1)
	}
	if len(text) > maxWriteBytes {
		return runtime.ErrorResult(fmt.Sprintf("error: edit_file: the result would be larger than %d MiB", maxWriteBytes>>20)), nil
	}
	if err := root.WriteFile(p, []byte(text), 0o644); err != nil {
		return fsError("edit_file", a.Path, err), nil
	}
	return runtime.Result{Content: fmt.Sprintf("replaced %d occurrence(s) in %s", map[bool]int{true: n, false: 1}[a.ReplaceAll], p)}, nil
}
