package agents

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// PolicyFile, PolicyLocalFile: the tiers of an agent's tool policy. The
// workspace tier is a PolicyFile in the data dir.
const (
	PolicyFile      = "policy.yaml"
	PolicyLocalFile = "policy.local.yaml"
)

// Decision is what a policy says of one tool call.
type Decision int

// The decisions.
const (
	Allow Decision = iota
	Ask
	Deny
)

func (d Decision) String() string { return [...]string{"allow", "ask", "deny"}[d] }

// Policy is the merged tool policy of an agent: deny and allow rules and
// notify patterns are the union of every tier (deliveries without
// repeats), notify is enabled when a tier enables it, the mode is the most
// specific tier's (dangerous when none sets it), except that dangerous
// does not loosen a mode a more general tier set. Deny wins over allow.
type Policy struct {
	// Mode is dangerous (run what is not denied), ask (ask for what is not
	// allowed) or restrict (run only what is allowed).
	Mode   string
	Allow  []Rule
	Deny   []Rule
	Notify Notify
	// Sessions says which of the agent's sessions each of its sessions
	// may read (the session tool, memory recall).
	Sessions SessionAccess
	// Files are the policy files read, for reloads.
	Files []string
	// Warnings are the keys the files have that a policy does not, and
	// settings that were ignored.
	Warnings []string
	modeSet  bool // a tier set Mode
}

// Notify says which calls are reported, and where.
type Notify struct {
	Enabled    bool
	Patterns   []Rule
	Deliveries []Delivery
}

// Delivery is one place notifications go (see DeliveryTypes): type log;
// type chat, with Gateway and ChatID or neither (the session's own chat);
// type webhook with a URL; type ntfy with a URL, an optional Token (sent
// as a bearer token; ${NAME} takes it from agnx.yaml's sandbox.env) and
// Priority.
type Delivery struct {
	// Type is log (the daemon's log), chat (a gateway's chat), webhook (a
	// JSON POST to URL) or ntfy (a text POST to an ntfy-compatible URL).
	Type string `yaml:"type"`
	// URL is where a webhook or ntfy delivery posts (http or https).
	URL string `yaml:"url"`
	// Gateway and ChatID name the chat of a chat delivery; neither: the
	// session's own chat.
	Gateway string `yaml:"gateway"`
	ChatID  string `yaml:"chat_id"`
	// Token is an ntfy delivery's bearer token; ${NAME} takes it from
	// agnx.yaml's sandbox.env.
	Token string `yaml:"token"`
	// Priority is an ntfy delivery's priority: 1 to 5, or min, low,
	// default, high, max, urgent.
	Priority string `yaml:"priority"`
}

// Rule matches tool calls. A rule comes in two forms.
//
// The parent's (Agnx/Duragent) form is "type:pattern", split at the first
// colon, where type is bash, builtin, cli, mcp or wasm (or a glob over
// them, like *) and pattern is matched against the call's invocation: a
// bash call's command line, a builtin's name or name:action, a cli or
// wasm tool's name, an MCP tool's server:tool. A rule without a colon is
// "*:rule" too. As a deny (or notify) pattern it matches as the parent's
// does, unanchored: without a *, the pattern anywhere in the invocation;
// with *s, its pieces in order anywhere. As an allow pattern it must match
// the whole invocation (a bare builtin name also covers its actions), and
// a bash line only when every command of it does (see below).
//
// Lite's own form names a tool: "read_file:notes/*" matches read_file
// calls whose subject (the path, the command, the URL) matches the glob
// "notes/*"; "read_file" (no colon, no space) every read_file call, as
// well as invocations the parent form matches. In globs, * matches any
// run of characters (spaces and slashes included), ? one character, and \
// escapes the next one.
//
// Subjects are normalised before they are matched, and patterns with
// them. The paths of read_file, write_file, edit_file and list_dir are
// taken relative to the workspace and cleaned (./x, a/../x and
// /workspace/x are all x). A bash command line is split into its commands
// (see [SplitCommands]), each matched with its words separated by one
// space and its short options merged and sorted (rm -fr, rm -r -f and
// rm -rf all read rm -fr): a deny rule denies when it matches the whole
// line or any one command, in any of the forms unwrapCommand gives
// (without VAR=value prefixes, sudo, env, command ...), or that command
// with only the short options the pattern names; an allow rule allows
// only when every command is matched by an allow rule as written, or when
// the rule, without globs, is the whole line (what allow_always saves). A
// line that cannot be split whole, or holds a here-document, is allowed
// by no glob.
//
// Rules are a convenience that catches the obvious, not a boundary: a
// shell can spell a command in more ways than any matcher can follow
// (variables, scripts it writes, symlinks, other tools). The sandbox is
// the boundary: what must never happen has to be impossible in it.
type Rule struct {
	// Tool and Subject are lite's form: the tool's name (a glob), and
	// the subject's glob (empty: any call of the tool). Tool is empty for
	// a rule of the parent's form only.
	Tool    string
	Subject string
	// Type and Pattern are the parent's form: the tool type's glob and
	// the invocation's pattern. Type is empty for a rule of lite's form
	// only.
	Type    string
	Pattern string
	Raw     string
	// path and shell are Subject (or, for a typed rule, Pattern) as it is
	// matched, worked out once by ParseRule (Decide runs on the event
	// loop, for every call): cleaned as a path (pathTool), and as a bash
	// pattern. literal is the pattern unescaped when it has no glob.
	path      string
	shell     shellPattern
	literal   string
	isLiteral bool
}

// ToolTypes are the tool types of the parent's rule form and invocations.
var ToolTypes = []string{"bash", "builtin", "cli", "mcp", "wasm"}

// typedPrefix reports whether the text before a rule's first colon is a
// tool type (or a glob over them): the rule is then of the parent's form.
func typedPrefix(t string) bool {
	return slices.Contains(ToolTypes, t) || strings.ContainsAny(t, "*?")
}

// ParseRule parses a rule, "type:pattern", "tool:subject" or "pattern".
func ParseRule(s string) (Rule, error) {
	r := Rule{Raw: s}
	t := strings.TrimSpace(s)
	if t == "" {
		return r, errors.New("a rule may not be empty")
	}
	head, rest, colon := strings.Cut(t, ":")
	head = strings.TrimSpace(head)
	switch {
	case !colon:
		r.Type, r.Pattern = "*", t
		if !strings.ContainsAny(t, " \t") {
			r.Tool = t
		}
	case typedPrefix(head):
		r.Type, r.Pattern = head, rest
	case head == "":
		return r, fmt.Errorf("rule %q names no tool: write type:pattern or tool:pattern, e.g. bash:git *", s)
	case strings.ContainsAny(head, " \t"):
		return r, fmt.Errorf("rule %q: a tool name has no spaces; write type:pattern or tool:pattern, e.g. bash:git *", s)
	default:
		r.Tool, r.Subject = head, rest
	}
	pattern := r.Subject
	if r.Tool == "" || r.Subject == "" {
		pattern = r.Pattern
	}
	if pattern != "" {
		r.path, r.shell = cleanRulePath(pattern), newShellPattern(pattern)
		r.literal, r.isLiteral = unescapeGlob(pattern)
	}
	return r, nil
}

// Matches reports whether the rule covers a call of tool with subject, as
// a deny rule does: for bash, the whole line or any one of its commands.
func (r Rule) Matches(tool, subject string) bool {
	return r.denies(newCall(Call{Tool: tool, Subject: subject}.fill()))
}

// Decide applies the policy to one call; it also returns the rule that
// decided, when one did.
func (p *Policy) Decide(tool, subject string) (Decision, string) {
	c := Call{Tool: tool, Subject: subject}.fill()
	return p.decide(p.newCall(c, p.Deny, p.Allow))
}

// Notifies reports whether a call is to be reported.
func (p *Policy) Notifies(tool, subject string) bool {
	c := Call{Tool: tool, Subject: subject}.fill()
	return p.notifies(p.newCall(c, p.Notify.Patterns))
}

// Check is Decide and Notifies in one, the event loop's question for every
// call: a bash line is split once for both.
func (p *Policy) Check(tool, subject string) (Decision, string, bool) {
	return p.CheckCall(Call{Tool: tool, Subject: subject})
}

// CheckCall is Check for a call whose type and invocation are known.
func (p *Policy) CheckCall(c Call) (Decision, string, bool) {
	cc := p.newCall(c.fill(), p.Deny, p.Allow, p.Notify.Patterns)
	d, rule := p.decide(cc)
	return d, rule, p.notifies(cc)
}

// newCall prepares a call for the rules of the lists given; the bash
// line is split, which is not free for a long one, only when one of them
// can match it.
func (p *Policy) newCall(c Call, lists ...[]Rule) call {
	cc := call{Call: c, complete: true}
	for _, rules := range lists {
		for _, r := range rules {
			if r.names(cc) {
				return newCall(c)
			}
		}
	}
	return cc
}

func (p *Policy) decide(c call) (Decision, string) {
	for _, r := range p.Deny {
		if r.denies(c) {
			return Deny, r.Raw
		}
		if !c.complete && r.names(c) {
			return Deny, r.Raw + "; the command has too many parts to check against it"
		}
	}
	if r, ok := p.allowedBy(c); ok {
		return Allow, r.Raw
	}
	switch p.Mode {
	case "ask":
		return Ask, ""
	case "restrict":
		return Deny, ""
	}
	return Allow, ""
}

func (p *Policy) notifies(c call) bool {
	if !p.Notify.Enabled {
		return false
	}
	if len(p.Notify.Patterns) == 0 {
		return true
	}
	for _, r := range p.Notify.Patterns {
		if r.denies(c) {
			return true
		}
	}
	return false
}

// Wildcard matches s against a glob where * is any run of characters, ?
// any one, and \ escapes. It backtracks only to the last star, so it runs
// in O(len(pattern)*len(s)) at worst.
func Wildcard(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		if p < len(pattern) {
			switch c := pattern[p]; {
			case c == '*':
				star, mark = p, i
				p++
				continue
			case c == '?':
				p++
				i++
				continue
			case c == '\\' && p+1 < len(pattern):
				if pattern[p+1] == s[i] {
					p += 2
					i++
					continue
				}
			case c == s[i]:
				p++
				i++
				continue
			}
		}
		if star < 0 {
			return false
		}
		p = star + 1
		mark++
		i = mark
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
