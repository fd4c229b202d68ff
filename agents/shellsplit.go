package agents

import (
	"strings"
)

// Limits of SplitCommands, so a hostile command line costs bounded work in
// the event loop, where policies are decided.
const (
	maxShellDepth    = 16    // nesting of $(...), `...`, bash -c and eval
	maxShellCommands = 2_000 // commands taken from one line
)

// SplitCommands splits a shell command line into the simple commands bash
// would run, each as its words with quotes and escapes removed: commands
// are separated by ; & && || | |& newlines and parentheses; the commands
// inside $(...), `...`, <(...) and >(...) (in double quotes too), and the
// string given to bash -c, sh -c or eval, are commands of their own as
// well as parts of the word or command that holds them. Comments are dropped, and so are the
// reserved words that open a compound command (if, then, while, do, {,
// ! ...). $'...' and $"..." are read as the strings they give.
//
// It is a best effort, for policies, not a shell: here-documents, case
// patterns, aliases, functions, variables and anything computed at run
// time are not understood. The second result is false when the line held
// more than maxShellCommands commands, and only the first ones were
// returned.
func SplitCommands(line string) ([][]string, bool) {
	sp := shellSplitter{s: line}
	sp.list(0)
	return sp.out, !sp.full
}

type shellSplitter struct {
	s     string
	i     int
	depth int
	out   [][]string
	full  bool // maxShellCommands reached, or reread exhausted
	// reread counts the bytes read a second time (see arith).
	reread int
}

// shellWords collects the words of the command being read.
type shellWords struct {
	words []string
	w     strings.Builder
	in    bool // inside a word (it may be empty: '')
}

func (c *shellWords) end() {
	if c.in {
		c.words = append(c.words, c.w.String())
		c.w.Reset()
		c.in = false
	}
}

// list reads commands up to the end of the input or, when close is not 0,
// up to an unquoted close byte, which it consumes.
func (sp *shellSplitter) list(close byte) {
	var c shellWords
	endCmd := func() {
		c.end()
		sp.add(c.words)
		c.words = nil
	}
	for sp.i < len(sp.s) {
		b := sp.s[sp.i]
		switch {
		case close != 0 && b == close:
			sp.i++
			endCmd()
			return
		case b == ' ' || b == '\t' || b == '\r':
			c.end()
			sp.i++
		case (b == '&' || b == '|') && sp.redirect(&c):
			c.w.WriteByte(b) // 2>&1, &>file, >|file: a redirection, not a separator
			c.in = true
			sp.i++
		case b == '\n' || b == ';' || b == '&' || b == '|' || b == '(' || b == ')':
			endCmd()
			sp.i++
		case b == '#' && !c.in:
			for sp.i < len(sp.s) && sp.s[sp.i] != '\n' {
				sp.i++
			}
		default:
			sp.wordByte(&c.w, b, false)
			c.in = true
		}
	}
	endCmd()
}

// redirect reports whether the & or | at sp.i belongs to a redirection.
func (sp *shellSplitter) redirect(c *shellWords) bool {
	s := c.w.String()
	if c.in && s != "" && (s[len(s)-1] == '>' || s[len(s)-1] == '<') {
		return true
	}
	return sp.s[sp.i] == '&' && sp.i+1 < len(sp.s) && sp.s[sp.i+1] == '>'
}

// wordByte reads what starts at sp.i (b) into the word w: a quoted string,
// an escape, a substitution or a plain byte. inDouble is set inside "...".
func (sp *shellSplitter) wordByte(w *strings.Builder, b byte, inDouble bool) {
	s := sp.s
	next := byte(0)
	if sp.i+1 < len(s) {
		next = s[sp.i+1]
	}
	switch {
	case b == '\\':
		switch {
		case next == '\n':
			sp.i += 2 // a line continuation
		case next == 0 && sp.i+1 >= len(s):
			w.WriteByte('\\')
			sp.i++
		case inDouble && !strings.ContainsRune("$`\"\\", rune(next)):
			w.WriteByte('\\')
			sp.i++
		default:
			w.WriteByte(next)
			sp.i += 2
		}
	case b == '\'' && !inDouble:
		end := strings.IndexByte(s[sp.i+1:], '\'')
		if end < 0 {
			w.WriteString(s[sp.i+1:])
			sp.i = len(s)
			return
		}
		w.WriteString(s[sp.i+1 : sp.i+1+end])
		sp.i += end + 2
	case b == '"' && !inDouble:
		sp.i++
		for sp.i < len(s) && s[sp.i] != '"' {
			sp.wordByte(w, s[sp.i], true)
		}
		sp.i++ // the closing quote (or past the end)
	case b == '$' && next == '\'' && !inDouble:
		sp.ansiC(w)
	case b == '$' && next == '"' && !inDouble:
		sp.i++ // $"...": a string to translate, read as "..."
	case b == '`':
		start := sp.i
		sp.i++
		sp.nested('`')
		w.WriteString(s[start:min(sp.i, len(s))])
	case b == '$' && next == '(' && sp.i+2 < len(s) && s[sp.i+2] == '(':
		start := sp.i
		sp.arith()
		w.WriteString(s[start:min(sp.i, len(s))])
	case (b == '$' || (!inDouble && (b == '<' || b == '>'))) && next == '(':
		start := sp.i
		sp.i += 2
		sp.nested(')')
		w.WriteString(s[start:min(sp.i, len(s))])
	default:
		w.WriteByte(b)
		sp.i++
	}
}

// nested reads a substitution's commands up to close.
func (sp *shellSplitter) nested(close byte) {
	if sp.depth >= maxShellDepth {
		end := strings.IndexByte(sp.s[sp.i:], close)
		if end < 0 {
			sp.i = len(sp.s)
		} else {
			sp.i += end + 1
		}
		return
	}
	sp.depth++
	sp.list(close)
	sp.depth--
}

// arith reads the $(( at sp.i. Bash takes it for arithmetic when the
// parenthesis closing the second ( is followed by the one closing the
// first: its text is then not a command, but it is read as if in double
// quotes, so the substitutions in it ($(...), `...`, even inside '...')
// run, and their commands are read. Otherwise it is $( (...) ...), a
// command substitution holding a subshell, and is read again as one; the
// bytes read again are bounded by the line's length, past which the line
// is given up as incomplete, so nesting cannot make it cost more.
func (sp *shellSplitter) arith() {
	start, n := sp.i, len(sp.out)
	if sp.depth >= maxShellDepth {
		sp.skipParens(start + 1)
		return
	}
	sp.depth++
	defer func() { sp.depth-- }()
	sp.i += 3
	var discard strings.Builder
	for depth := 2; sp.i < len(sp.s); {
		switch b := sp.s[sp.i]; b {
		case '(':
			depth++
			sp.i++
		case ')':
			sp.i++
			if depth--; depth > 1 {
				continue
			}
			if sp.i < len(sp.s) && sp.s[sp.i] == ')' {
				sp.i++
				return
			}
			if sp.reread += sp.i - start; sp.reread > len(sp.s) {
				sp.full = true
				return
			}
			sp.out, sp.i = sp.out[:n], start+2
			sp.list(')')
			return
		default:
			discard.Reset()
			sp.wordByte(&discard, b, true)
		}
	}
}

// skipParens moves sp.i past the parenthesised text that starts at open.
func (sp *shellSplitter) skipParens(open int) {
	depth := 0
	for sp.i = open; sp.i < len(sp.s); sp.i++ {
		switch sp.s[sp.i] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				sp.i++
				return
			}
		}
	}
}

// add records one command, without its leading reserved words, and then
// the commands of the string it hands to a shell (bash -c, eval).
func (sp *shellSplitter) add(words []string) {
	for len(words) > 0 && shellKeyword(words[0]) {
		words = words[1:]
	}
	if len(words) == 0 {
		return
	}
	if len(sp.out) >= maxShellCommands {
		sp.full = true
		return
	}
	sp.out = append(sp.out, words)
	if sp.depth >= maxShellDepth {
		return
	}
	for _, v := range unwrapCommand(words) {
		if script, ok := shellScript(v); ok {
			inner := shellSplitter{s: script, depth: sp.depth + 1}
			inner.list(0)
			for _, w := range inner.out {
				if len(sp.out) >= maxShellCommands {
					sp.full = true
					return
				}
				sp.out = append(sp.out, w)
			}
			sp.full = sp.full || inner.full
			return
		}
	}
}

// shellKeyword reports the reserved words that may open a command without
// being one. time is not among them: it takes options (time -p rm), so it
// is a wrapper unwrapOnce takes off.
func shellKeyword(w string) bool {
	switch w {
	case "{", "}", "!", "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "esac", "coproc":
		return true
	}
	return false
}

// shellScript returns the string a command hands to a shell to run:
// bash -c STRING (any option cluster holding c; the name after -o, +o,
// -O or +O is skipped), eval ARGS. busybox sh is a wrapper and a shell:
// unwrapCommand takes busybox off.
func shellScript(words []string) (string, bool) {
	switch baseName(words[0]) {
	case "eval":
		return strings.Join(words[1:], " "), len(words) > 1
	case "bash", "sh", "dash", "zsh", "ksh", "ash", "mksh":
		for i := 1; i < len(words); i++ {
			w := words[i]
			if (!strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "+")) || w == "-" || w == "--" || w == "+" {
				return "", false
			}
			if w[0] == '-' && !strings.HasPrefix(w, "--") && strings.Contains(w, "c") && i+1 < len(words) {
				return words[i+1], true
			}
			if len(w) == 2 && strings.ContainsRune("oO", rune(w[1])) {
				i++ // -o posix, +O extglob: the option's name
			}
		}
	}
	return "", false
}

// baseName is the last element of a command's path: /bin/rm is rm.
func baseName(w string) string {
	if i := strings.LastIndexByte(w, '/'); i >= 0 && i < len(w)-1 {
		return w[i+1:]
	}
	return w
}

// maxUnwrap bounds how many wrappers (sudo env nice ...) are taken off one
// command.
const maxUnwrap = 8

// unwrapCommand returns the forms one command can be seen as, for deny
// rules: as written; without its leading VAR=value assignments; and
// without each wrapper that runs the rest of the line as a command (sudo,
// doas, env, command, exec, nohup, nice, timeout, xargs, time, busybox
// ...), their options skipped as well as can be guessed. A form whose command is
// written as a path (/bin/rm) is also given by its name (rm). The first
// form is always the command itself.
func unwrapCommand(words []string) [][]string {
	forms := [][]string{words}
	addForm := func(w []string) {
		if len(w) == 0 {
			return
		}
		forms = append(forms, w)
		if b := baseName(w[0]); b != w[0] {
			forms = append(forms, append([]string{b}, w[1:]...))
		}
	}
	if b := baseName(words[0]); b != words[0] {
		forms = append(forms, append([]string{b}, words[1:]...))
	}
	rest := skipAssignments(words)
	if len(rest) != len(words) {
		addForm(rest)
	}
	for range maxUnwrap {
		if len(rest) == 0 {
			break
		}
		next, ok := unwrapOnce(rest)
		if !ok {
			break
		}
		rest = next
		addForm(rest)
	}
	return forms
}

// skipAssignments drops leading NAME=value words.
func skipAssignments(words []string) []string {
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	return words
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// unwrapOnce takes one wrapper off the front of a command: the wrapper,
// its options (and the values of those known to take one), and what it
// takes before the command (env's assignments, timeout's duration).
func unwrapOnce(words []string) ([]string, bool) {
	var withValue string // short options that take a value
	switch baseName(words[0]) {
	case "sudo", "doas":
		withValue = "ugCDhprtUTR"
	case "env":
		withValue = "uCSP"
	case "nice", "ionice":
		withValue = "ncp"
	case "timeout":
		withValue = "sk"
	case "xargs":
		withValue = "IiLlnPdEsa"
	case "stdbuf":
		withValue = "ioe"
	case "exec":
		withValue = "a" // exec -a NAME: the name the command is given
	case "command", "builtin", "nohup", "setsid", "time", "chrt", "taskset", "unbuffer", "caffeinate", "busybox":
	default:
		return nil, false
	}
	name := baseName(words[0])
	w := words[1:]
	for len(w) > 0 && strings.HasPrefix(w[0], "-") && w[0] != "-" {
		opt := w[0]
		w = w[1:]
		if opt == "--" {
			break
		}
		if !strings.HasPrefix(opt, "--") && len(opt) == 2 && strings.ContainsRune(withValue, rune(opt[1])) && len(w) > 0 {
			w = w[1:]
		}
	}
	switch name {
	case "env":
		w = skipAssignments(w)
	case "timeout", "chrt", "taskset":
		if len(w) > 0 {
			w = w[1:] // the duration, priority or CPU mask
		}
	}
	return w, true
}

// normFlags returns a command with its short options put in one order, so
// that rm -fr, rm -rf, rm -r -f and rm -f / -r read the same: every word
// after the command name that is a dash and letters only (-rf, -r; not
// --force, -n5 or a word after --) is taken out, and their letters, sorted
// and without repeats, are put back as one word where the first of them
// stood. It also returns that word's index (0 when there is none).
//
// Options that take a value keep it where it was, so tar -xf a.tar reads
// tar -fx a.tar: matching stays consistent, as rules get the same
// treatment, but a pattern should not count on which letter a value
// follows.
func normFlags(words []string) ([]string, int) {
	var letters [128]bool
	at := 0
	out := make([]string, 0, len(words))
	for i, w := range words {
		if i == 0 || !isFlagCluster(w) {
			if w == "--" {
				out = append(out, words[i:]...)
				break
			}
			out = append(out, w)
			continue
		}
		if at == 0 {
			at = len(out)
			out = append(out, "")
		}
		for j := 1; j < len(w); j++ {
			letters[w[j]] = true
		}
	}
	if at == 0 {
		return out, 0
	}
	var b strings.Builder
	b.WriteByte('-')
	for c := range letters {
		if letters[c] {
			b.WriteByte(byte(c))
		}
	}
	out[at] = b.String()
	return out, at
}

// isFlagCluster reports a word of a dash and ASCII letters only.
func isFlagCluster(w string) bool {
	if len(w) < 2 || w[0] != '-' {
		return false
	}
	for i := 1; i < len(w); i++ {
		if c := w[i]; (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}
