package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DirectivesDir is the folder of directive files, both in the data dir
// (shared by every agent) and in an agent's folder.
const DirectivesDir = "directives"

// Directive is one directive file: a standing instruction that goes into
// the system message under "## Directives".
type Directive struct {
	// Name is the file's name without ".md" (memory for memory.md).
	Name string
	// Text is the file's content as written.
	Text string
}

// Bounds on the directives one folder contributes: they are read on every
// load and sent with every request.
const (
	maxDirectives     = 32
	maxDirectiveFile  = 16 << 10
	maxDirectiveTotal = 64 << 10
)

// LoadDirectives reads the *.md files of dir, sorted by name, skipping
// empty ones, like Agnx. A missing folder has none. Files past the bounds
// (32 files, 16 KiB each, 64 KiB together), symlinks that lead out of dir
// and files that are not regular are skipped, each with a warning.
func LoadDirectives(dir string) (ds []Directive, warnings []string) {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: directives are not loaded: %v", dir, err)}
	}
	defer root.Close()
	return readDirectives(root, dir)
}

// readDirectives reads the directives of root, whose path is dir.
func readDirectives(root *os.Root, dir string) (ds []Directive, warnings []string) {
	f, err := root.Open(".")
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: directives are not loaded: %v", dir, err)}
	}
	names, _ := f.Readdirnames(16 * maxDirectives) // bounded: a huge folder must not stall the load
	f.Close()
	names = slices.DeleteFunc(names, func(n string) bool { return !strings.HasSuffix(n, ".md") || strings.HasPrefix(n, ".") })
	slices.Sort(names)
	total := 0
	for _, n := range names {
		file := filepath.Join(dir, n)
		if len(ds) == maxDirectives {
			warnings = append(warnings, fmt.Sprintf("%s: more than %d directive files; the rest are left out (merge or remove some)", dir, maxDirectives))
			break
		}
		data, _, err := readInside(root, n)
		switch {
		case err != nil:
			warnings = append(warnings, fmt.Sprintf("%s: directive left out: %v", file, err))
			continue
		case len(data) > maxDirectiveFile:
			warnings = append(warnings, fmt.Sprintf("%s: directive left out: it is larger than %d KiB; shorten it", file, maxDirectiveFile>>10))
			continue
		case total+len(data) > maxDirectiveTotal:
			warnings = append(warnings, fmt.Sprintf("%s: directive left out: the directives of %s pass %d KiB together; shorten them", file, dir, maxDirectiveTotal>>10))
			continue
		case strings.TrimSpace(string(data)) == "":
			continue
		}
		total += len(data)
		ds = append(ds, Directive{Name: strings.TrimSuffix(n, ".md"), Text: string(data)})
	}
	return ds, warnings
}

// loadDirectives reads the agent's own directives (<folder>/directives).
func (a *Agent) loadDirectives(root *os.Root) {
	sub, err := root.OpenRoot(DirectivesDir)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	dir := filepath.Join(a.Dir, DirectivesDir)
	if err != nil {
		a.Warnings = append(a.Warnings, fmt.Sprintf("%s: directives are not loaded: %v; it must be a folder inside the agent's folder", dir, err))
		return
	}
	defer sub.Close()
	ds, warnings := readDirectives(sub, dir)
	a.Directives = ds
	a.Warnings = append(a.Warnings, warnings...)
	a.addFile(dir)
	for _, d := range ds {
		a.addFile(filepath.Join(dir, d.Name+".md"))
	}
}
