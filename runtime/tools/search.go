package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Caps of the search tools, so one call can flood neither the context
// nor the daemon's memory, nor run for ever.
const (
	maxGlobResults = 500
	maxGrepMatches = 200
	maxGrepLine    = 300 // characters of a matching line shown
	// maxGrepLineBytes is how much of one line grep matches against; the
	// rest of a longer line is read past, unmatched.
	maxGrepLineBytes = 64 << 10
	// maxGrepScan is how many bytes one grep call reads in all.
	maxGrepScan = 256 << 20
	// maxWalkEntries is how many folder entries glob and grep look at in
	// one call; a folder's entries are held (sorted) while it is walked.
	maxWalkEntries = 100_000
)

// errWalkBudget stops a walk that has looked at maxWalkEntries entries.
var errWalkBudget = errors.New("too many entries")

// errScanBudget stops a grep that has read maxGrepScan bytes.
var errScanBudget = errors.New("too many bytes")

// Glob finds files in the workspace by pattern.
type Glob struct{ Workspace string }

var _ runtime.Tool = (*Glob)(nil)

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

const globSchema = `{"type":"object","properties":{` +
	`"pattern":{"type":"string","description":"Glob pattern such as *.md or **/*.go (** crosses folders)"},` +
	`"path":{"type":"string","description":"Folder to search, relative to the workspace (default: all of it)"}},` +
	`"required":["pattern"],"additionalProperties":false}`

// Spec describes glob to the model.
func (t *Glob) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "glob", Description: "Find files in your workspace whose path matches a glob pattern (** matches across folders).",
		Schema: []byte(globSchema)}
}

// Run lists the matching files.
func (t *Glob) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a globArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("error: glob: " + err.Error()), nil
	}
	if _, err := path.Match(strings.ReplaceAll(a.Pattern, "**", "*"), ""); err != nil || a.Pattern == "" {
		return runtime.ErrorResult(fmt.Sprintf("error: glob: %q is not a valid pattern", a.Pattern)), nil
	}
	var out []string
	more := 0
	root, refused, err := openWorkspace(ctx, t.Workspace, false)
	if root == nil {
		return refused, err
	}
	defer root.Close()
	base := cleanPath(t.Workspace, a.Path)
	err = walk(ctx, root, base, func(p string, d fs.DirEntry) error {
		rel := p
		if base != "." {
			rel = strings.TrimPrefix(p, base+"/")
		}
		if !d.IsDir() && MatchGlob(a.Pattern, rel) {
			if len(out) < maxGlobResults {
				out = append(out, p)
			} else {
				more++
			}
		}
		return nil
	})
	stopped := errors.Is(err, errWalkBudget)
	if err != nil && !stopped {
		return fsError("glob", a.Path, err), nil
	}
	if len(out) == 0 && !stopped {
		return runtime.Result{Content: "no files match " + a.Pattern}, nil
	}
	text := strings.Join(out, "\n")
	if more > 0 {
		text += fmt.Sprintf("\n[... %d more files not shown; narrow the pattern ...]", more)
	}
	if stopped {
		text += fmt.Sprintf("\n[... stopped after looking at %d entries; give a narrower path ...]", maxWalkEntries)
	}
	return runtime.Result{Content: text}, nil
}

// MatchGlob matches a slash-separated path against a pattern where * and ?
// stay within one folder and ** spans any number of folders.
func MatchGlob(pattern, name string) bool {
	return matchParts(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchParts(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchParts(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// walk calls fn for each file (not folder) under dir of the workspace,
// in lexical order, skipping .git, with paths relative to the workspace
// root. dir is a cleanPath. Folders are opened with O_DIRECTORY, so
// nothing else (a FIFO swapped in for one) is ever opened by the walk, and
// symlinks to folders are not followed. It stops with errWalkBudget after
// maxWalkEntries entries. root is the caller's, so a call that reads the
// files it finds (grep) reads them in the folder it walked.
func walk(ctx context.Context, root *os.Root, dir string, fn func(p string, d fs.DirEntry) error) error {
	info, err := root.Stat(dir)
	if err != nil {
		return err
	}
	switch {
	case info.Mode().IsRegular():
		return fn(dir, fs.FileInfoToDirEntry(info))
	case !info.IsDir():
		return errNotRegular // named explicitly: say so rather than find nothing
	}
	w := walker{ctx: ctx, root: root, fn: fn}
	return w.dir(dir, 0)
}

type walker struct {
	ctx  context.Context
	root *os.Root
	fn   func(p string, d fs.DirEntry) error
	seen int
}

// maxWalkDepth bounds the recursion of walker.dir (and the folders it
// holds open at once).
const maxWalkDepth = 64

func (w *walker) dir(p string, depth int) error {
	if depth > maxWalkDepth {
		return nil
	}
	entries, err := w.read(p)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		child := path.Join(p, e.Name())
		switch {
		case e.IsDir() && e.Name() == ".git":
		case e.IsDir():
			if err := w.dir(child, depth+1); err != nil {
				return err
			}
		default:
			if err := w.fn(child, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// read returns the entries of folder p, sorted, counting them against the
// budget.
func (w *walker) read(p string) ([]fs.DirEntry, error) {
	d, err := openDir(w.root, p)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var entries []fs.DirEntry
	for {
		batch, err := d.ReadDir(listBatch)
		w.seen += len(batch)
		if w.seen > maxWalkEntries {
			return nil, errWalkBudget
		}
		entries = append(entries, batch...)
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// Grep searches the workspace's text files for a regular expression.
type Grep struct{ Workspace string }

var _ runtime.Tool = (*Grep)(nil)

type grepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Include    string `json:"include"`
	IgnoreCase bool   `json:"ignore_case"`
}

const grepSchema = `{"type":"object","properties":{` +
	`"pattern":{"type":"string","description":"Regular expression (Go RE2 syntax)"},` +
	`"path":{"type":"string","description":"Folder or file to search, relative to the workspace (default: all of it)"},` +
	`"include":{"type":"string","description":"Only files whose path matches this glob, e.g. **/*.md"},` +
	`"ignore_case":{"type":"boolean","description":"Match without regard to case"}},` +
	`"required":["pattern"],"additionalProperties":false}`

// Spec describes grep to the model.
func (t *Grep) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "grep", Description: "Search the text files of your workspace for a regular expression; prints file:line: text.",
		Schema: []byte(grepSchema)}
}

// Run searches.
func (t *Grep) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a grepArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("error: grep: " + err.Error()), nil
	}
	expr := a.Pattern
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil || a.Pattern == "" {
		return runtime.ErrorResult(fmt.Sprintf("error: grep: %q is not a valid regular expression", a.Pattern)), nil
	}
	root, refused, err := openWorkspace(ctx, t.Workspace, false)
	if root == nil {
		return refused, err
	}
	defer root.Close()
	g := grepper{ctx: ctx, root: root, re: re, budget: maxGrepScan}
	err = walk(ctx, root, cleanPath(t.Workspace, a.Path), func(p string, d fs.DirEntry) error {
		if (a.Include != "" && !MatchGlob(a.Include, p)) || g.matches >= maxGrepMatches {
			return nil
		}
		return g.file(p)
	})
	var note string
	switch {
	case errors.Is(err, errWalkBudget):
		note = fmt.Sprintf("[... stopped after looking at %d entries; give a narrower path ...]", maxWalkEntries)
	case errors.Is(err, errScanBudget):
		note = fmt.Sprintf("[... stopped after reading %d MiB; give a narrower path or include ...]", maxGrepScan>>20)
	case err != nil:
		return fsError("grep", a.Path, err), nil
	case g.matches == 0:
		return runtime.Result{Content: "no matches for " + a.Pattern}, nil
	case g.matches >= maxGrepMatches:
		note = fmt.Sprintf("[... stopped at %d matches; narrow the search ...]", maxGrepMatches)
	}
	return runtime.Result{Content: strings.TrimRight(g.out.String()+note, "\n")}, nil
}

// grepper is one grep call's state across the files it reads.
type grepper struct {
	ctx     context.Context
	root    *os.Root
	re      *regexp.Regexp
	out     strings.Builder
	matches int
	budget  int64 // bytes left to read
}

// file appends the matching lines of one text file. It streams the file
// line by line, matching only the first maxGrepLineBytes of a line, so a
// file or a line of any size costs one buffer. A file with a NUL byte is
// binary and skipped: its matches are collected apart and dropped. Files
// that are not regular (FIFOs, devices, sockets) and files that cannot be
// read are skipped too.
func (g *grepper) file(p string) error {
	f, _, err := openRegular(g.root, p, os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, readBuffer)
	var found strings.Builder
	n := 0
	line := make([]byte, 0, 4<<10)
	for num, chunks := 1, 0; g.matches+n < maxGrepMatches; chunks++ {
		frag, err := br.ReadSlice('\n')
		if g.budget -= int64(len(frag)); g.budget < 0 {
			g.keep(&found, n)
			return errScanBudget
		}
		if chunks%64 == 0 && g.ctx.Err() != nil {
			return g.ctx.Err()
		}
		if bytes.IndexByte(frag, 0) >= 0 {
			return nil // binary
		}
		if room := maxGrepLineBytes - len(line); room > 0 {
			line = append(line, frag[:min(len(frag), room)]...)
		}
		end := len(frag) > 0 && frag[len(frag)-1] == '\n'
		if !end && errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if end || len(line) > 0 {
			if text := bytes.TrimSuffix(line, []byte("\n")); g.re.Match(text) {
				if len(text) > maxGrepLine {
					text = append(bytes.ToValidUTF8(text[:maxGrepLine], nil), "…"...)
				}
				fmt.Fprintf(&found, "%s:%d: %s\n", p, num, text)
				n++
			}
		}
		line, num = line[:0], num+1
		if err != nil {
			break
		}
	}
	g.keep(&found, n)
	return nil
}

// keep adds one file's matches to the result.
func (g *grepper) keep(found *strings.Builder, n int) {
	g.out.WriteString(found.String())
	g.matches += n
}
