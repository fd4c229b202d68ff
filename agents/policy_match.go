package agents

import (
	"path"
	"slices"
	"strings"
)

// shellTool is the tool whose subject is a shell command line.
const shellTool = "bash"

// pathTool reports the tools whose subject is a path in the workspace.
func pathTool(tool string) bool {
	switch tool {
	case "read_file", "write_file", "edit_file", "list_dir":
		return true
	}
	return false
}

// call is one tool call as rules see it.
type call struct {
	tool, subject string
	// cmds are a bash line's commands, each as the forms unwrapCommand
	// gives (the first is the command as written), worked out once for
	// all rules.
	cmds     [][]cmdForm
	complete bool // every command of the line is in cmds
}

// cmdForm is one form of a command, ready to be matched.
type cmdForm struct {
	line     string   // the words, one space apart
	norm     []string // the words with their short options merged
	normLine string
	at       int // the index of the merged options in norm, 0 if none
}

func newCall(tool, subject string) call {
	c := call{tool: tool, subject: subject, complete: true}
	switch {
	case tool == shellTool:
		var cmds [][]string
		cmds, c.complete = SplitCommands(subject)
		c.cmds = make([][]cmdForm, len(cmds))
		for i, cmd := range cmds {
			for _, f := range unwrapCommand(cmd) {
				norm, at := normFlags(f)
				c.cmds[i] = append(c.cmds[i], cmdForm{line: strings.Join(f, " "), norm: norm, normLine: strings.Join(norm, " "), at: at})
			}
		}
	case pathTool(tool):
		c.subject = cleanRulePath(subject)
	}
	return c
}

// cleanRulePath normalises a path subject or pattern: relative to the
// workspace (a leading /workspace or / goes), cleaned, ./ gone. Patterns
// are cleaned once, by ParseRule. The tools' Subject already gives
// subjects in this form (runtime/tools.cleanPath, which also knows the
// workspace's host path); they are cleaned again here for other callers
// of Decide and Matches, which costs no allocation on a clean path.
func cleanRulePath(p string) string {
	p = strings.TrimSpace(p)
	if rest, ok := strings.CutPrefix(p, "/workspace/"); ok || p == "/workspace" {
		p = rest
	}
	p = strings.TrimLeft(p, "/")
	if p == "" {
		return "."
	}
	return path.Clean(p)
}

// denies reports whether r, as a deny rule, covers the call.
func (r Rule) denies(c call) bool {
	if !Wildcard(r.Tool, c.tool) {
		return false
	}
	if r.Subject == "" {
		return true
	}
	if pathTool(c.tool) {
		return Wildcard(r.path, c.subject)
	}
	if Wildcard(r.Subject, c.subject) {
		return true
	}
	if c.tool != shellTool {
		return false
	}
	for _, forms := range c.cmds {
		for _, form := range forms {
			if r.shell.matches(form, true) {
				return true
			}
		}
	}
	return false
}

// allowedBy returns the allow rule that allows the call. For bash, every
// command of the line must be matched, as written, by an allow rule (the
// rule returned is the first command's); a line that could not be split
// whole is not allowed by rules.
func (p *Policy) allowedBy(c call) (Rule, bool) {
	if c.tool != shellTool || (len(c.cmds) == 0 && c.complete) {
		for _, r := range p.Allow {
			if r.denies(call{tool: c.tool, subject: c.subject, complete: true}) {
				return r, true
			}
		}
		return Rule{}, false
	}
	if !c.complete {
		return Rule{}, false
	}
	var first Rule
	for i, forms := range c.cmds {
		found := false
		for _, r := range p.Allow {
			if Wildcard(r.Tool, c.tool) && (r.Subject == "" || r.shell.matches(forms[0], false)) {
				if i == 0 {
					first = r
				}
				found = true
				break
			}
		}
		if !found {
			return Rule{}, false
		}
	}
	return first, true
}

// shellPattern is a bash rule's pattern in the forms commands are matched
// against: as written, with its whitespace collapsed, and with its short
// options merged (normFlags).
type shellPattern struct {
	raw, collapsed, norm string
	flags                string // the pattern's merged short options, "" if none
}

func newShellPattern(subject string) shellPattern {
	words := strings.Fields(subject)
	sp := shellPattern{raw: subject, collapsed: strings.Join(words, " ")}
	if len(words) > 0 {
		norm, at := normFlags(words)
		sp.norm = strings.Join(norm, " ")
		if at > 0 {
			sp.flags = norm[at]
		}
	}
	return sp
}

// matches reports whether one command's words match. For a deny rule, a
// command with more short options than the pattern names also matches
// when those the pattern names are among them: rm -rfv / is denied by
// rm -rf *.
func (sp shellPattern) matches(f cmdForm, deny bool) bool {
	if Wildcard(sp.raw, f.line) || Wildcard(sp.collapsed, f.line) {
		return true
	}
	if sp.norm == "" {
		return false
	}
	if Wildcard(sp.norm, f.normLine) {
		return true
	}
	if !deny || sp.flags == "" || f.at == 0 || !hasLetters(f.norm[f.at], sp.flags) {
		return false
	}
	norm := slices.Clone(f.norm)
	norm[f.at] = sp.flags
	return Wildcard(sp.norm, strings.Join(norm, " "))
}

// hasLetters reports whether the option cluster have holds every letter
// of want (both start with a dash).
func hasLetters(have, want string) bool {
	for i := 1; i < len(want); i++ {
		if strings.IndexByte(have[1:], want[i]) < 0 {
			return false
		}
	}
	return true
}
