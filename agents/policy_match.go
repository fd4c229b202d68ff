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
	Call
	// cmds are a bash line's commands, each as the forms unwrapCommand
	// gives (the first is the command as written), worked out once for
	// all rules.
	cmds     [][]cmdForm
	complete bool // every command of the line is in cmds
	heredoc  bool // the line holds a here-document or here-string
}

// cmdForm is one form of a command, ready to be matched.
type cmdForm struct {
	line     string   // the words, one space apart
	norm     []string // the words with their short options merged
	normLine string
	at       int // the index of the merged options in norm, 0 if none
}

// newCall prepares c, filled, for every rule.
func newCall(c Call) call {
	cc := call{Call: c, complete: true}
	switch {
	case c.Type == "bash" || c.Tool == shellTool:
		var cmds [][]string
		cmds, cc.complete = SplitCommands(c.Invocation)
		cc.heredoc = strings.Contains(c.Invocation, "<<")
		cc.cmds = make([][]cmdForm, len(cmds))
		for i, cmd := range cmds {
			for _, f := range unwrapCommand(cmd) {
				norm, at := normFlags(f)
				cc.cmds[i] = append(cc.cmds[i], cmdForm{line: strings.Join(f, " "), norm: norm, normLine: strings.Join(norm, " "), at: at})
			}
		}
	case pathTool(c.Tool):
		cc.Subject = cleanRulePath(c.Subject)
	}
	return cc
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

// names reports whether the rule is about the call's tool or type.
func (r Rule) names(c call) bool {
	return (r.Tool != "" && Wildcard(r.Tool, c.Tool)) || (r.Type != "" && Wildcard(r.Type, c.Type))
}

// isShell reports whether the call is a bash command line.
func (c call) isShell() bool { return c.Type == "bash" || c.Tool == shellTool }

// denies reports whether r, as a deny (or notify) rule, covers the call.
func (r Rule) denies(c call) bool {
	if r.Tool != "" && Wildcard(r.Tool, c.Tool) && r.deniesSubject(c, r.Subject) {
		return true
	}
	if r.Type == "" || !Wildcard(r.Type, c.Type) {
		return false
	}
	if parentMatch(r.Pattern, c.Invocation) {
		return true
	}
	return c.isShell() && r.Pattern != "" && r.deniesCommands(c)
}

// deniesSubject is lite's form of a deny: subject's glob, anchored, on
// the subject, and for bash on each command.
func (r Rule) deniesSubject(c call, subject string) bool {
	if subject == "" {
		return true
	}
	if pathTool(c.Tool) {
		return Wildcard(r.path, c.Subject)
	}
	if Wildcard(subject, c.Subject) {
		return true
	}
	return c.isShell() && r.deniesCommands(c)
}

func (r Rule) deniesCommands(c call) bool {
	for _, forms := range c.cmds {
		for _, form := range forms {
			if r.shell.matches(form, true) {
				return true
			}
		}
	}
	return false
}

// parentMatch is the parent's pattern match: without a *, pattern
// anywhere in s; with *s, its pieces in order anywhere in s. It never
// allocates.
func parentMatch(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return strings.Contains(s, pattern)
	}
	for pattern != "" {
		piece, rest, _ := strings.Cut(pattern, "*")
		pattern = rest
		if piece == "" {
			continue
		}
		i := strings.Index(s, piece)
		if i < 0 {
			return false
		}
		s = s[i+len(piece):]
	}
	return true
}

// allows reports whether r, as an allow rule, covers a call that is not
// a bash line: anchored.
func (r Rule) allows(c call) bool {
	if r.Tool != "" && Wildcard(r.Tool, c.Tool) {
		switch {
		case r.Subject == "":
			return true
		case pathTool(c.Tool):
			if Wildcard(r.path, c.Subject) {
				return true
			}
		case Wildcard(r.Subject, c.Subject):
			return true
		}
	}
	if r.Type == "" || !Wildcard(r.Type, c.Type) {
		return false
	}
	if r.Pattern == "" || Wildcard(r.Pattern, c.Invocation) {
		return true
	}
	// builtin:memory covers memory:recall too.
	name, _, action := strings.Cut(c.Invocation, ":")
	return action && c.Type == "builtin" && !strings.Contains(r.Pattern, ":") && Wildcard(r.Pattern, name)
}

// allowsCommand reports whether r, as an allow rule, covers one command
// of a bash line, as written.
func (r Rule) allowsCommand(c call, f cmdForm) bool {
	if r.Tool != "" && Wildcard(r.Tool, c.Tool) && (r.Subject == "" || r.shell.matches(f, false)) {
		return true
	}
	return r.Type != "" && Wildcard(r.Type, c.Type) && (r.Pattern == "" || r.shell.matches(f, false))
}

// allowsLine reports whether r is the bash line itself, without globs.
func (r Rule) allowsLine(c call) bool {
	return r.isLiteral && r.literal == c.Invocation && r.names(c)
}

// allowedBy returns the allow rule that allows the call. For bash, every
// command of the line must be matched, as written, by an allow rule (the
// rule returned is the first command's), or a rule without globs must be
// the line; a line that could not be split whole, or holds a
// here-document, is allowed by no glob.
func (p *Policy) allowedBy(c call) (Rule, bool) {
	if !c.isShell() {
		for _, r := range p.Allow {
			if r.allows(c) {
				return r, true
			}
		}
		return Rule{}, false
	}
	for _, r := range p.Allow {
		if r.allowsLine(c) {
			return r, true
		}
	}
	if !c.complete || c.heredoc {
		return Rule{}, false
	}
	if len(c.cmds) == 0 {
		for _, r := range p.Allow {
			if r.names(c) && (r.Subject == "" && r.Pattern == "" || r.Pattern == "*" || r.Subject == "*") {
				return r, true
			}
		}
		return Rule{}, false
	}
	var first Rule
	for i, forms := range c.cmds {
		found := false
		for _, r := range p.Allow {
			if r.allowsCommand(c, forms[0]) {
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

// EscapeGlob escapes s's glob characters (* ? \), so that it matches
// itself alone.
func EscapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '*' || c == '?' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeGlob returns the text a glob without wildcards matches, and
// whether it has none.
func unescapeGlob(g string) (string, bool) {
	if !strings.ContainsAny(g, `*?\`) {
		return g, true
	}
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		switch c := g[i]; {
		case c == '*' || c == '?':
			return "", false
		case c == '\\' && i+1 < len(g):
			i++
			b.WriteByte(g[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
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
