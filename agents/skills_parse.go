package agents

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// skillFrontMatter is the YAML between the --- lines of a SKILL.md.
// Other keys (license, compatibility) are the Agent Skills format's and
// are ignored, as Agnx ignores them.
type skillFrontMatter struct {
	Name         *string        `yaml:"name"`
	Description  *string        `yaml:"description"`
	AllowedTools string         `yaml:"allowed-tools"`
	Metadata     map[string]any `yaml:"metadata"`
}

// ParseSkill parses the front matter of a SKILL.md: YAML between a "---"
// line and the next one, which may follow "# title" lines and blank lines.
// file names the document in errors and becomes Path. Every error is an
// *Error whose line is the file's own (not the front matter's): the key
// at fault, or the opening "---" line for a missing key.
func ParseSkill(file string, data []byte) (*Skill, error) {
	s, _, err := parseSkill(file, data)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// parseSkill is ParseSkill that also returns the line of the name key,
// for the loader's check that the name is the folder's.
func parseSkill(file string, data []byte) (*Skill, int, error) {
	fm, open, err := frontMatter(file, string(data))
	if err != nil {
		return nil, 0, err
	}
	// Line n of fm is line open+n-1 of the file: fm starts on the "---"
	// line, just after the dashes.
	at := func(n int) int {
		if n <= 0 {
			return open
		}
		return open + n - 1
	}
	doc, err := ParseYAML(file, []byte(fm))
	if err == nil {
		var raw skillFrontMatter
		if err = doc.Decode(&raw); err == nil {
			return checkSkill(file, doc, &raw, at)
		}
	}
	var e *Error
	if errors.As(err, &e) {
		return nil, 0, &Error{File: file, Line: at(e.Line), Msg: e.Msg}
	}
	return nil, 0, &Error{File: file, Line: open, Msg: err.Error()}
}

// checkSkill checks the decoded front matter; at maps a line of the front
// matter to the file's.
func checkSkill(file string, doc *Doc, raw *skillFrontMatter, at func(int) int) (*Skill, int, error) {
	nameLine := at(doc.Line("name"))
	fail := func(key, format string, args ...any) (*Skill, int, error) {
		line := at(0) // a missing key: the opening --- line
		if key != "" {
			line = at(doc.Line(key))
		}
		return nil, 0, &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case raw.Name == nil:
		return fail("", "the front matter has no name; add name: <the folder's name>")
	case !validSkillName(*raw.Name):
		return fail("name", "name %q must be 1 to %d lower-case letters, digits and hyphens", *raw.Name, maxSkillName)
	case raw.Description == nil:
		return fail("", "the front matter has no description; add one saying what the skill does and when to use it")
	case strings.TrimSpace(*raw.Description) == "":
		return fail("description", "the description is empty; say what the skill does and when to use it")
	case utf8.RuneCountInString(*raw.Description) > maxSkillDescription:
		return fail("description", "the description is longer than %d characters; shorten it and move the details into the body", maxSkillDescription)
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
	return s, nameLine, nil
}

// frontMatter returns the text after the opening "---" up to the next
// line that starts with "---", and the line number of the opening one.
// Blank lines and lines starting with "#" may come before it.
func frontMatter(file, s string) (string, int, error) {
	line := 1
	for {
		l, rest, more := strings.Cut(s, "\n")
		t := strings.TrimLeft(l, " \t\r")
		if strings.HasPrefix(t, "---") {
			body := t[3:]
			if more {
				body += "\n" + rest
			}
			end := strings.Index(body, "\n---")
			if end < 0 {
				return "", 0, &Error{File: file, Line: line, Msg: "the front matter has no closing --- line; add one after the description"}
			}
			return body[:end], line, nil
		}
		if !more || !(strings.TrimSpace(t) == "" || strings.HasPrefix(t, "#")) {
			return "", 0, &Error{File: file, Line: line,
				Msg: "no front matter: the file must start with a --- line, the name and description, and another --- line"}
		}
		s = rest
		line++
	}
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
