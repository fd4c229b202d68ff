package tools

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxListEntries caps how many entries list_dir returns.
const maxListEntries = 500

// ListDir lists a directory in the workspace.
type ListDir struct{ Workspace string }

var _ runtime.Tool = (*ListDir)(nil)

type listDirArgs struct {
	Path string `json:"path"`
}

const listDirSchema = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"Directory relative to the workspace (default: the workspace itself)"}},"additionalProperties":false}`

// Spec describes list_dir to the model.
func (t *ListDir) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{
		Name:        "list_dir",
		Description: "List the files and directories in a directory of your workspace. Directories end with /.",
		Schema:      []byte(listDirSchema),
	}
}

// Run lists the directory.
func (t *ListDir) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a listDirArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("error: list_dir: " + err.Error()), nil
	}
	root, err := os.OpenRoot(t.Workspace)
	if err != nil {
		return runtime.Result{}, fmt.Errorf("open workspace: %w", err)
	}
	defer root.Close()
	shown := a.Path
	if shown == "" {
		shown = "."
	}
	entries, err := fs.ReadDir(root.FS(), cleanPath(a.Path))
	if err != nil {
		return fsError("list_dir", shown, err), nil
	}
	if len(entries) == 0 {
		return runtime.Result{Content: fmt.Sprintf("%s is empty", shown)}, nil
	}
	var b strings.Builder
	for i, e := range entries {
		if i == maxListEntries {
			fmt.Fprintf(&b, "[... %d more entries not shown ...]\n", len(entries)-i)
			break
		}
		b.WriteString(e.Name())
		switch {
		case e.IsDir():
			b.WriteByte('/')
		case e.Type()&fs.ModeSymlink != 0:
			b.WriteString(" (link)")
		default:
			if info, err := e.Info(); err == nil {
				fmt.Fprintf(&b, " (%d bytes)", info.Size())
			}
		}
		b.WriteByte('\n')
	}
	return runtime.Result{Content: strings.TrimRight(b.String(), "\n")}, nil
}

// Subject is what policies match: the path.
func (t *ListDir) Subject(args []byte) string {
	var a listDirArgs
	_ = decodeArgs(args, &a)
	return a.Path
}
