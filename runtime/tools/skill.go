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
	"path/filepath"
	"slices"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// SkillDir is one skill the skill tool reads: its name and its folder (a
// host path, where the sandbox also shows it).
type SkillDir struct {
	Name string
	Dir  string
}

// Skill lets the model read its skills (the Agent Skills format), a lite
// extension: with a name, the skill's SKILL.md and the list of its files;
// with a file too, that file. Reads go through an os.Root on the skill's
// folder, so a path with "..", an absolute path elsewhere or a symlink
// that leads out is refused; only regular files are read, without
// blocking, and at most 256 KiB of one. It never writes.
type Skill struct {
	// Skills are the agent's skills, by name.
	Skills []SkillDir
}

// Bounds of what one call returns.
const (
	// maxSkillRead is the most of one file a call returns.
	maxSkillRead = 256 << 10
	// maxSkillList and maxSkillDepth bound the list of a skill's files.
	maxSkillList  = 200
	maxSkillDepth = 4
)

var _ runtime.Tool = (*Skill)(nil)

type skillArgs struct {
	Name string `json:"name"`
	File string `json:"file"`
}

// Spec describes the skill tool to the model; the schema lists the
// skills' names.
func (t *Skill) Spec() runtime.ToolSpec {
	names, _ := json.Marshal(t.names())
	schema := `{"type":"object","properties":{` +
		`"name":{"type":"string","enum":` + string(names) + `,"description":"The skill, as <available_skills> names it"},` +
		`"file":{"type":"string","description":"A file of the skill, relative to its folder (scripts/run.sh); ` +
		`leave it out to read SKILL.md and list the skill's files"}},` +
		`"required":["name"],"additionalProperties":false}`
	return runtime.ToolSpec{Name: "skill", Schema: []byte(schema),
		Description: "Read one of your skills (listed in <available_skills>): without file, its SKILL.md and the list of its files; " +
			"with file, that file of the skill's folder. Read-only. The skill's folder is also readable, not writable, " +
			"in the sandbox at its <location>'s folder, so its scripts can be run from there."}
}

func (t *Skill) names() []string {
	names := make([]string, 0, len(t.Skills))
	for _, s := range t.Skills {
		names = append(names, s.Name)
	}
	return names
}

// Subject is what policies match: "<name>/<file>", the file as it will
// be opened (SKILL.md when none is given).
func (t *Skill) Subject(args []byte) string {
	var a skillArgs
	_ = decodeArgs(args, &a)
	rel := skillPath(t.find(a.Name), a.File)
	if rel == "" {
		rel = "SKILL.md"
	}
	return a.Name + "/" + rel
}

func (t *Skill) find(name string) SkillDir {
	for _, s := range t.Skills {
		if s.Name == name {
			return s
		}
	}
	return SkillDir{}
}

// Run reads the skill or one of its files.
func (t *Skill) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a skillArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("error: skill: " + err.Error()), nil
	}
	s := t.find(a.Name)
	if s.Name == "" {
		return runtime.ErrorResult(fmt.Sprintf("error: skill: there is no skill %q; the skills are: %s",
			a.Name, strings.Join(t.names(), ", "))), nil
	}
	root, err := openSkill(s.Dir)
	if err != nil {
		return runtime.ErrorResult(fmt.Sprintf("error: skill: the folder of skill %s cannot be opened (%v); tell the operator", s.Name, err)), nil
	}
	defer root.Close()
	rel := skillPath(s, a.File)
	if rel == "" {
		return t.overview(ctx, root, s)
	}
	if !filepath.IsLocal(rel) {
		return runtime.ErrorResult(fmt.Sprintf("error: skill: file %q is not inside the folder of skill %s; "+
			"give a path relative to it, such as scripts/run.sh", a.File, s.Name)), nil
	}
	text, res, ok := readSkillFile(root, s, rel)
	if !ok {
		return res, nil
	}
	details, _ := json.Marshal(map[string]any{"skill": s.Name, "file": rel, "path": filepath.Join(s.Dir, rel)})
	return runtime.Result{Content: text, Details: details}, nil
}

// openSkill opens the skill's folder as a root. It goes through its
// parent, so that a folder swapped for a link since the load is followed
// only while it stays in the parent (the skills folder): os.OpenRoot
// would follow it anywhere.
func openSkill(dir string) (*os.Root, error) {
	parent, err := os.OpenRoot(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	return parent.OpenRoot(filepath.Base(dir))
}

// overview is SKILL.md followed by the list of the skill's files.
func (t *Skill) overview(ctx context.Context, root *os.Root, s SkillDir) (runtime.Result, error) {
	text, res, ok := readSkillFile(root, s, "SKILL.md")
	if !ok {
		return res, nil
	}
	var b strings.Builder
	b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n[files of skill %s, in %s; read one with file set to its path, or use it at that folder in the sandbox]\n", s.Name, s.Dir)
	files, more := listSkill(ctx, root)
	for _, f := range files {
		b.WriteString(f)
		b.WriteByte('\n')
	}
	if more {
		fmt.Fprintf(&b, "[... more files not listed: only %d entries, %d folders deep, are shown ...]\n", maxSkillList, maxSkillDepth)
	}
	details, _ := json.Marshal(map[string]any{"skill": s.Name, "file": "SKILL.md", "path": filepath.Join(s.Dir, "SKILL.md"), "files": len(files)})
	return runtime.Result{Content: b.String(), Details: details}, nil
}

// skillPath is the path, relative to the skill's folder, that file names:
// "" for none, the part under the folder for an absolute path inside it
// (the model sees the folder's absolute path), otherwise cleaned, with a
// leading "..", an absolute path kept for the caller to refuse.
func skillPath(s SkillDir, file string) string {
	file = strings.TrimSpace(file)
	if file == "" {
		return ""
	}
	if s.Dir != "" {
		if rest, ok := strings.CutPrefix(file, filepath.Clean(s.Dir)+"/"); ok {
			file = rest
		}
	}
	return path.Clean(file)
}

// readSkillFile reads rel inside root: its text, capped, or the error
// result the model gets and false.
func readSkillFile(root *os.Root, s SkillDir, rel string) (string, runtime.Result, bool) {
	f, st, err := openRegular(root, rel, os.O_RDONLY, 0)
	if err != nil {
		return "", skillError(s, rel, err), false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSkillRead))
	if err != nil {
		return "", skillError(s, rel, err), false
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", runtime.ErrorResult(fmt.Sprintf("error: skill: %s of skill %s is a binary file; use it in the sandbox at %s",
			rel, s.Name, filepath.Join(s.Dir, rel))), false
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	if size := st.Size(); size > int64(len(data)) {
		text = string(trimPartialRune(data))
		text += fmt.Sprintf("\n[... cut: %s has %d bytes and only the first %d KiB are shown; read the rest in the sandbox, "+
			"e.g. tail -c +%d %s ...]", rel, size, maxSkillRead>>10, len(data)+1, filepath.Join(s.Dir, rel))
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	return text, runtime.Result{}, true
}

// skillError is the sentence the model sees for a file of a skill that
// cannot be read.
func skillError(s SkillDir, rel string, err error) runtime.Result {
	msg := fmt.Sprintf("%s of skill %s cannot be read: %v", rel, s.Name, err)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		msg = fmt.Sprintf("skill %s has no file %s; call skill with only the name to list its files", s.Name, rel)
	case errors.Is(err, fs.ErrInvalid), strings.Contains(err.Error(), "path escapes from parent"):
		msg = fmt.Sprintf("%s leads outside the folder of skill %s, so it is not read; a skill may only use its own files", rel, s.Name)
	case errors.Is(err, errIsDir):
		msg = fmt.Sprintf("%s of skill %s is a folder; call skill with only the name to list its files", rel, s.Name)
	case errors.Is(err, errNotRegular):
		msg = fmt.Sprintf("%s of skill %s is a named pipe, device or socket, not a regular file", rel, s.Name)
	case errors.Is(err, fs.ErrPermission):
		msg = fmt.Sprintf("%s of skill %s cannot be read: permission denied", rel, s.Name)
	}
	return runtime.ErrorResult("error: skill: " + msg)
}

// listSkill lists the files under root, breadth first and sorted per
// folder ("scripts/" for a folder, "run.sh (120 bytes)" for a file),
// hidden ones left out; more reports that some were left out for the
// bounds. Links are listed, never followed.
func listSkill(ctx context.Context, root *os.Root) (out []string, more bool) {
	queue := []string{"."}
	for depth := 0; len(queue) > 0; depth++ {
		var next []string
		for _, dir := range queue {
			if ctx.Err() != nil {
				return out, true
			}
			d, err := openDir(root, dir)
			if err != nil {
				continue
			}
			ents, err := d.ReadDir(maxSkillList + 1)
			d.Close()
			if len(ents) > maxSkillList || err != nil && !errors.Is(err, io.EOF) {
				more = true
			}
			slices.SortFunc(ents, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") {
					continue
				}
				if len(out) == maxSkillList {
					return out, true
				}
				p := path.Join(dir, e.Name())
				switch {
				case e.IsDir() && depth+1 < maxSkillDepth:
					out = append(out, p+"/")
					next = append(next, p)
				case e.IsDir():
					out, more = append(out, p+"/"), true
				case e.Type()&fs.ModeSymlink != 0:
					out = append(out, p+" (link)")
				case !e.Type().IsRegular():
					out = append(out, p+" (not a regular file)")
				default:
					size := ""
					if info, err := e.Info(); err == nil {
						size = fmt.Sprintf(" (%d bytes)", info.Size())
					}
					out = append(out, p+size)
				}
			}
		}
		queue = next
	}
	return out, more
}
