package tools

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Caps of the search tools, so one call cannot flood the context.
const (
	maxGlobResults = 500
	maxGrepMatches = 200
	maxGrepFile    = 2 << 20
	maxGrepLine    = 300
)

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
	err := walk(ctx, t.Workspace, a.Path, func(p string, d fs.DirEntry) error {
		rel := p
		if base := cleanPath(a.Path); base != "." {
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
	if err != nil {
		return fsError("glob", a.Path, err), nil
	}
	if len(out) == 0 {
		return runtime.Result{Content: "no files match " + a.Pattern}, nil
	}
	text := strings.Join(out, "\n")
	if more > 0 {
		text += fmt.Sprintf("\n[... %d more files not shown; narrow the pattern ...]", more)
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

// walk visits the files under dir of the workspace (skipping .git), with
// paths relative to the workspace root.
func walk(ctx context.Context, workspace, dir string, fn func(p string, d fs.DirEntry) error) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return fmt.Errorf("open workspace: %w", err)
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), cleanPath(dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		return fn(p, d)
	})
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
	root, err := os.OpenRoot(t.Workspace)
	if err != nil {
		return runtime.Result{}, fmt.Errorf("open workspace: %w", err)
	}
	defer root.Close()
	var b strings.Builder
	matches := 0
	err = walk(ctx, t.Workspace, a.Path, func(p string, d fs.DirEntry) error {
		if d.IsDir() || (a.Include != "" && !MatchGlob(a.Include, p)) || matches >= maxGrepMatches {
			return nil
		}
		matches += grepFile(root, p, re, &b, maxGrepMatches-matches)
		return nil
	})
	if err != nil {
		return fsError("grep", a.Path, err), nil
	}
	if matches == 0 {
		return runtime.Result{Content: "no matches for " + a.Pattern}, nil
	}
	if matches >= maxGrepMatches {
		b.WriteString(fmt.Sprintf("[... stopped at %d matches; narrow the search ...]", maxGrepMatches))
	}
	return runtime.Result{Content: strings.TrimRight(b.String(), "\n")}, nil
}

// grepFile appends up to limit matching lines of one text file.
func grepFile(root *os.Root, p string, re *regexp.Regexp, b *strings.Builder, limit int) int {
	info, err := root.Stat(p)
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxGrepFile {
		return 0
	}
	data, err := root.ReadFile(p)
	if err != nil || bytes.IndexByte(data, 0) >= 0 {
		return 0
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxGrepFile)
	for line := 1; sc.Scan() && n < limit; line++ {
		text := sc.Text()
		if !re.MatchString(text) {
			continue
		}
		if len(text) > maxGrepLine {
			text = strings.ToValidUTF8(text[:maxGrepLine], "") + "…"
		}
		fmt.Fprintf(b, "%s:%d: %s\n", p, line, text)
		n++
	}
	return n
}
