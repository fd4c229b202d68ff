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
// Agent Skills format. Only its name, description and location reach the
// prompt; the model reads the file itself when a task calls for it.
type Skill struct {
	// Name is the front matter's name, which is also the folder's name.
	Name        string
	Description string
	// Path is the absolute path of SKILL.md.
	Path string
	// AllowedTools is allowed-tools split at spaces. Like Agnx, agnx-lite
	// records it and does not enforce it.
	AllowedTools []string
	// Metadata is the front matter's metadata map, values as text.
	Metadata map[string]string
}

// Bounds on what the skills folder may make the loader read: an agent
// folder can come from anywhere (an archive, a git clone).
const (
	// maxSkills is the number of skills loaded; more are skipped with a
	// warning.
	maxSkills = 64
	// maxSkillFile bounds a SKILL.md.
	maxSkillFile = 256 << 10
	// maxSkillDescription bounds a description (the Agent Skills limit).
	maxSkillDescription = 1024
	// maxSkillName bounds a name.
	maxSkillName = 64
)

// skillFrontMatter is the YAML between the --- lines of a SKILL.md.
type skillFrontMatter struct {
	Name         *string        `yaml:"name"`
	Description  *string        `yaml:"description"`
	AllowedTools string         `yaml:"allowed-tools"`
	Metadata     map[string]any `yaml:"metadata"`
}

// loadSkills reads the skills in rel (spec.skills_dir, relative to root),
// sorted by folder name. A missing folder means no skills. A skill that
// cannot be used is skipped with a warning saying why.
func (a *Agent) loadSkills(root *os.Root, rel string) {
	sub, err := root.OpenRoot(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		a.Warnings = append(a.Warnings, fmt.Sprintf("%s: skills are not loaded: %v; skills_dir must be a folder inside the agent's folder", a.SkillsDir, err))
		return
	}
	defer sub.Close()
	dir, err := sub.Open(".")
	if err != nil {
		a.Warnings = append(a.Warnings, fmt.Sprintf("%s: skills are not loaded: %v", a.SkillsDir, err))
		return
	}
	// Read a bounded number of entries: a folder with a million files
	// must not stall the load.
	entries, _ := dir.ReadDir(4 * maxSkills)
	dir.Close()
	slices.SortFunc(entries, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
	a.addFile(a.SkillsDir)
	for _, e := range entries {
		if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if len(a.Skills) == maxSkills {
			a.Warnings = append(a.Warnings, fmt.Sprintf("%s: more than %d skills; the rest are not loaded (remove the ones the agent does not need)", a.SkillsDir, maxSkills))
			return
		}
		file := filepath.Join(a.SkillsDir, e.Name(), "SKILL.md")
		s, err := readSkill(sub, e.Name(), file)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a folder without SKILL.md is not a skill
		}
		if err != nil {
			a.Warnings = append(a.Warnings, fmt.Sprintf("%s: skill skipped: %v", file, err))
			continue
		}
		a.addFile(file)
		a.Skills = append(a.Skills, *s)
	}
}

// readSkill reads and checks <name>/SKILL.md inside sub.
func readSkill(sub *os.Root, name, file string) (*Skill, error) {
	f, err := openInside(sub, filepath.Join(name, "SKILL.md"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, errors.New("SKILL.md is a folder; make it a file")
	}
	if st.Size() > maxSkillFile {
		return nil, fmt.Errorf("SKILL.md is larger than %d KiB; move the details into other files of the skill", maxSkillFile>>10)
	}
	data, _, err := readOpen(f, "SKILL.md")
	if err != nil {
		return nil, err
	}
	s, err := ParseSkill(file, data)
	if err != nil {
		return nil, err
	}
	if s.Name != name {
		return nil, fmt.Errorf("name %q is not the folder's name %q; make them the same", s.Name, name)
	}
	if abs, err := filepath.Abs(file); err == nil {
		s.Path = abs
	}
	return s, nil
}

// ParseSkill parses the front matter of a SKILL.md: YAML between a "---"
// line and the next one, which may follow "# title" lines and blank lines.
// file names the document in errors and becomes Path.
func ParseSkill(file string, data []byte) (*Skill, error) {
	fm, ok := frontMatter(string(data))
	if !ok {
		return nil, errors.New("no front matter: the file must start with a --- line, the name and description, and another --- line")
	}
	doc, err := ParseYAML(file, []byte(fm))
	if err != nil {
		return nil, err
	}
	var raw skillFrontMatter
	if err := doc.Decode(&raw); err != nil {
		return nil, err
	}
	switch {
	case raw.Name == nil:
		return nil, errors.New("the front matter has no name; add name: <the folder's name>")
	case !validSkillName(*raw.Name):
		return nil, fmt.Errorf("name %q must be 1 to %d lower-case letters, digits and hyphens", *raw.Name, maxSkillName)
	case raw.Description == nil:
		return nil, errors.New("the front matter has no description; add one saying when to use the skill")
	case len(*raw.Description) > maxSkillDescription:
		return nil, fmt.Errorf("the description is longer than %d bytes; shorten it", maxSkillDescription)
	}
	s := &Skill{Name: *raw.Name, Description: *raw.Description, Path: file, AllowedTools: strings.Fields(raw.AllowedTools)}
	if len(raw.Metadata) > 0 {
		s.Metadata = make(map[string]string, len(raw.Metadata))
		for k, v := range raw.Metadata {
			if v != nil {
				s.Metadata[k] = fmt.Sprint(v)
			}
		}
	}
	return s, nil
}

// frontMatter returns the text between the opening "---" and the next line
// that starts with "---". Blank lines and lines starting with "#" may come
// before the opening one.
func frontMatter(s string) (string, bool) {
	s = strings.TrimLeft(s, " \t\r\n")
	for !strings.HasPrefix(s, "---") {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || !(strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "") {
			return "", false
		}
		s = strings.TrimLeft(rest, " \t\r\n")
	}
	body := s[3:]
	end := strings.Index(body, "\n---")
	if end < 0 {
		return "", false
	}
	return body[:end], true
}

func validSkillName(name string) bool {
	if name == "" || len(name) > maxSkillName {
		return false
	}
	for _, r := range name {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z') {
			return false
		}
	}
	return true
}
