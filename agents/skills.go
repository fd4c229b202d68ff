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

// Skill is one skill of an agent: <skills_dir>/<name>/SKILL.md, in the
// Agent Skills format, or <data dir>/skills/<name>/SKILL.md, shared by
// every agent. Only its name, description and location reach the prompt;
// the model reads the rest (with the skill tool, or in the sandbox, where
// the skill's folder is visible read-only at Dir) when a task calls for it.
type Skill struct {
	// Name is the front matter's name, which is also the folder's name.
	Name        string
	Description string
	// Path is the absolute path of SKILL.md, symlinks resolved: the
	// <location> the model reads.
	Path string
	// Dir is the skill's folder, filepath.Dir(Path): what the skill tool
	// reads and the sandbox shows, read-only, at the same path.
	Dir string
	// Shared is set for a skill of the data dir's skills folder.
	Shared bool
	// AllowedTools is allowed-tools split at spaces. Like Agnx, agnx-lite
	// records it and does not enforce it: a skill never changes what the
	// agent's policy allows.
	AllowedTools []string
	// Metadata is the front matter's metadata map, values as text.
	Metadata map[string]string
}

// SkillsFolder is the data dir's folder of skills shared by every agent.
const SkillsFolder = "skills"

// SkillFile is the file that makes a folder a skill.
const SkillFile = "SKILL.md"

// Bounds on what the skills folder may make the loader read: an agent
// folder can come from anywhere (an archive, a git clone).
const (
	// maxSkills is the number of skills an agent gets (its own and the
	// shared ones together); more are skipped with a warning.
	maxSkills = 64
	// maxSkillFile bounds a SKILL.md.
	maxSkillFile = 256 << 10
	// maxSkillDescription bounds a description, in characters (the Agent
	// Skills limit).
	maxSkillDescription = 1024
	// maxSkillName bounds a name.
	maxSkillName = 64
)

// skillSet is what one skills folder holds.
type skillSet struct {
	skills []Skill
	// files are the folder, each skill folder and each SKILL.md read:
	// what tells that the set is out of date.
	files    []string
	problems []*Error
}

// loadSkills reads the skills in rel (spec.skills_dir, relative to root),
// sorted by folder name. A missing folder means no skills. A skill that
// cannot be used is skipped with a warning saying why.
func (a *Agent) loadSkills(root *os.Root, rel string) {
	sub, err := root.OpenRoot(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return // Files has the agent's folder, whose time changes when skills/ appears
	}
	if err != nil {
		a.addSkillProblems([]*Error{{File: a.SkillsDir,
			Msg: fmt.Sprintf("skills are not loaded: %v; skills_dir must be a folder inside the agent's folder", err)}})
		return
	}
	defer sub.Close()
	set := readSkills(sub, a.SkillsDir)
	a.Skills = set.skills
	a.addSkillProblems(set.problems)
	for _, f := range set.files {
		a.addFile(f)
	}
}

// LoadSkills reads the skills of dir, a skills folder (<data dir>/skills,
// an agent's skills_dir), sorted by name. It returns the files to watch
// for changes (dir too when it is missing, so that its creation is seen)
// and one *Error per skill left out or per problem with the folder. A
// missing folder holds no skills and is no problem.
func LoadSkills(dir string) (skills []Skill, files []string, problems []*Error) {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, []string{dir}, nil
	}
	if err != nil {
		return nil, []string{dir}, []*Error{{File: dir, Msg: fmt.Sprintf("skills are not loaded: %v; make it a readable folder", err)}}
	}
	defer root.Close()
	set := readSkills(root, dir)
	return set.skills, set.files, set.problems
}

// LoadSkill reads one skill: dir/SKILL.md, whose name must be dir's.
func LoadSkill(dir string) (*Skill, error) {
	dir = filepath.Clean(dir)
	parent, name := filepath.Dir(dir), filepath.Base(dir)
	root, err := os.OpenRoot(parent)
	if err != nil {
		return nil, &Error{File: dir, Msg: fmt.Sprintf("cannot be read: %v", err)}
	}
	defer root.Close()
	return readSkill(root, parent, name)
}

// AddSharedSkills gives the agent the skills of dir, the data dir's skills
// folder (shared by every agent, marked Shared), after its own: a skill of
// its own wins over a shared one of the same name. Their problems join
// SkillProblems and Warnings, and their files join Files, so that an edit
// reloads the agent.
func (a *Agent) AddSharedSkills(dir string) {
	skills, files, problems := LoadSkills(dir)
	a.addSkillProblems(problems)
	for _, f := range files {
		a.addFile(f)
	}
	own := make(map[string]bool, len(a.Skills))
	for _, s := range a.Skills {
		own[s.Name] = true
	}
	for _, s := range skills {
		if own[s.Name] {
			continue
		}
		if len(a.Skills) == maxSkills {
			a.Warnings = append(a.Warnings, fmt.Sprintf("%s: the agent has %d skills with its own; the other shared ones are not loaded "+
				"(remove the ones it does not need)", dir, maxSkills))
			return
		}
		s.Shared = true
		a.Skills = append(a.Skills, s)
	}
}

// addSkillProblems records problems in SkillProblems and, as sentences,
// in Warnings.
func (a *Agent) addSkillProblems(problems []*Error) {
	for _, p := range problems {
		a.SkillProblems = append(a.SkillProblems, p)
		w := *p
		if filepath.Base(p.File) == SkillFile {
			w.Msg = "skill skipped: " + p.Msg
		}
		a.Warnings = append(a.Warnings, w.Error())
	}
}

// readSkills reads the skills of sub, the skills folder at dir, at most
// maxSkills of them.
func readSkills(sub *os.Root, dir string) skillSet {
	set := skillSet{files: []string{dir}}
	d, err := sub.Open(".")
	if err != nil {
		set.problems = append(set.problems, &Error{File: dir, Msg: fmt.Sprintf("skills are not loaded: %v", err)})
		return set
	}
	// Read a bounded number of entries: a folder with a million files
	// must not stall the load.
	entries, _ := d.ReadDir(4 * maxSkills)
	d.Close()
	slices.SortFunc(entries, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
	for _, e := range entries {
		if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if len(set.skills) == maxSkills {
			set.problems = append(set.problems, &Error{File: dir,
				Msg: fmt.Sprintf("more than %d skills; the rest are not loaded (remove the ones the agent does not need)", maxSkills)})
			break
		}
		folder := filepath.Join(dir, e.Name())
		set.files = append(set.files, folder) // its SKILL.md may come later
		s, err := readSkill(sub, dir, e.Name())
		if errors.Is(err, fs.ErrNotExist) {
			continue // a folder without SKILL.md is not a skill
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				e = &Error{File: filepath.Join(folder, SkillFile), Msg: err.Error()}
			}
			set.problems = append(set.problems, e)
			continue
		}
		set.files = append(set.files, filepath.Join(folder, SkillFile))
		set.skills = append(set.skills, *s)
	}
	return set
}

// readSkill reads and checks <name>/SKILL.md inside sub, the skills folder
// at dir. A missing SKILL.md is an error matching fs.ErrNotExist; any
// other is an *Error.
func readSkill(sub *os.Root, dir, name string) (*Skill, error) {
	file := filepath.Join(dir, name, SkillFile)
	fail := func(format string, args ...any) (*Skill, error) {
		return nil, &Error{File: file, Msg: fmt.Sprintf(format, args...)}
	}
	f, err := openInside(sub, filepath.Join(name, SkillFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, err
	case errors.Is(err, ErrOutside):
		return fail("is a link that leads outside its skills folder: make the skill a real folder inside it")
	case errors.Is(err, ErrNotRegular):
		return fail("%v%s", ErrNotRegular, notRegularFix)
	case err != nil:
		return fail("cannot be read: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return fail("cannot be read: %v", err)
	case st.IsDir():
		return fail("is a folder; make it a file")
	case st.Size() > maxSkillFile:
		return fail("is larger than %d KiB; move the details into other files of the skill", maxSkillFile>>10)
	}
	data, _, err := readOpen(f, SkillFile)
	if err != nil {
		return fail("cannot be read: %v", err)
	}
	s, nameLine, err := parseSkill(file, data)
	if err != nil {
		return nil, err
	}
	if s.Name != name {
		return nil, &Error{File: file, Line: nameLine, Msg: fmt.Sprintf("name %q is not the folder's name %q; make them the same", s.Name, name)}
	}
	// Dir is where the sandbox shows the folder: its real path, checked
	// to lie in the skills folder (the open above was, through sub).
	base, err := realPath(dir)
	if err != nil {
		return fail("cannot be read: %v", err)
	}
	real, err := realPath(filepath.Join(dir, name))
	if err != nil {
		return fail("cannot be read: %v", err)
	}
	if !within(base, real) || real == base {
		return fail("is a link that leads outside its skills folder: make the skill a real folder inside it")
	}
	s.Dir, s.Path = real, filepath.Join(real, SkillFile)
	return s, nil
}

// realPath is p made absolute, with symlinks resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// within reports whether p is root or lies under it (both clean).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}
