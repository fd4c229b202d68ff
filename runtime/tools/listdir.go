package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxListEntries caps how many entries list_dir returns. A folder of any
// size is read in batches, keeping only the first maxListEntries names in
// order, so a million files cost no more memory than a few hundred.
const maxListEntries = 500

// listBatch is how many entries are read from a folder at a time.
const listBatch = 1000

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
	root, refused, err := openWorkspace(ctx, t.Workspace, false)
	if root == nil {
		return refused, err
	}
	defer root.Close()
	shown := a.Path
	if shown == "" {
		shown = "."
	}
	entries, total, err := firstEntries(ctx, root, cleanPath(t.Workspace, a.Path), maxListEntries)
	if err != nil {
		return fsError("list_dir", shown, err), nil
	}
	if total == 0 {
		return runtime.Result{Content: fmt.Sprintf("%s is empty", shown)}, nil
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.Name())
		switch {
		case e.IsDir():
			b.WriteByte('/')
		case e.Type()&fs.ModeSymlink != 0:
			b.WriteString(" (link)")
		case e.Type()&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice) != 0:
			b.WriteString(" (not a regular file)")
		default:
			if info, err := e.Info(); err == nil {
				fmt.Fprintf(&b, " (%d bytes)", info.Size())
			}
		}
		b.WriteByte('\n')
	}
	if total > len(entries) {
		fmt.Fprintf(&b, "[... %d more entries not shown ...]\n", total-len(entries))
	}
	return runtime.Result{Content: strings.TrimRight(b.String(), "\n")}, nil
}

// firstEntries reads the folder p in batches and returns its first n
// entries by name, and how many it holds.
func firstEntries(ctx context.Context, root *os.Root, p string, n int) ([]fs.DirEntry, int, error) {
	d, err := openDir(root, p)
	if err != nil {
		return nil, 0, err
	}
	defer d.Close()
	byName := func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }
	var keep []fs.DirEntry
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		batch, err := d.ReadDir(listBatch)
		total += len(batch)
		keep = append(keep, batch...)
		if len(keep) > n {
			slices.SortFunc(keep, byName)
			keep = slices.Clip(keep[:n])
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
	}
	slices.SortFunc(keep, byName)
	return keep, total, nil
}

// Subject is what policies match: the path relative to the workspace, as
// it will be opened.
func (t *ListDir) Subject(args []byte) string {
	var a listDirArgs
	_ = decodeArgs(args, &a)
	return cleanPath(t.Workspace, a.Path)
}
