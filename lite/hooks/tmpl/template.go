package tmpl

import (
	"fmt"
	"strconv"
	"strings"
)

// A hook's template is the operator's, its data the caller's: the body of
// an authenticated request, which may still be hostile (a leaked secret, a
// compromised CI). The language is therefore tiny, and has no loops and
// no reflection: text with actions {{ PIPELINE }}, where PIPELINE is . (the
// whole body) or a path .a.b.c, then zero or more of | default "text",
// | json and | trunc N. A key of digits also indexes an array
// (.commits.0.id). A missing key, a path through the wrong type or a null
// renders empty (text/template printed "<no value>"). {{- and -}} trim the
// white space beside an action, and {{/* ... */}} is a comment.
//
// Each action costs at most its path's length plus MaxOutput bytes of
// printing (see hookValue), so rendering is bounded by the template's size
// whatever the body holds, and the output stops at MaxOutput.
const (
	// MaxOutput bounds what a template renders, in bytes.
	MaxOutput = 16 << 10
	// maxLen bounds a template's source, in bytes.
	maxLen        = 4096
	hookFuncList  = "use default, json or trunc"
	hookOnlyPaths = "only .path and | default/json/trunc are supported, e.g. {{.action | default \"none\"}}"
)

// Template is a parsed template: text and actions in order.
type Template struct {
	parts []hookPart
}

// hookPart is a run of text, or an action when act is set.
type hookPart struct {
	text string
	act  *hookAction
}

// hookAction is one {{ }}: a path (nil: the whole body) and the functions
// its value goes through.
type hookAction struct {
	path  []string
	calls []hookCall
}

// hookCall is one | function with its argument.
type hookCall struct {
	fn   string // "default", "json" or "trunc"
	text string // default's text
	n    int    // trunc's count of characters
}

// Parse parses a hook's template. Its error is one sentence
// saying what is wrong and at which byte.
func Parse(src string) (*Template, error) {
	if len(src) > maxLen {
		return nil, fmt.Errorf("the template is longer than %d bytes: shorten it", maxLen)
	}
	p := &tmplParser{src: src}
	return p.parse()
}

// tmplParser holds the state of one parse.
type tmplParser struct {
	src       string
	pos       int
	t         Template
	trimNext  bool // the last action ended with -}}
	lastSpace bool // the last skipSpace skipped something
}

func (p *tmplParser) parse() (*Template, error) {
	for p.pos < len(p.src) {
		i := strings.Index(p.src[p.pos:], "{{")
		if i < 0 {
			p.addText(p.src[p.pos:])
			break
		}
		p.addText(p.src[p.pos : p.pos+i])
		start := p.pos + i
		p.pos = start + 2
		if err := p.action(start); err != nil {
			return nil, err
		}
	}
	return &p.t, nil
}

// addText appends text, trimmed on the left after a -}}.
func (p *tmplParser) addText(s string) {
	if p.trimNext {
		s = strings.TrimLeft(s, spaceChars)
		p.trimNext = false
	}
	if s != "" {
		p.t.parts = append(p.t.parts, hookPart{text: s})
	}
}

const spaceChars = " \t\r\n"

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// trimLast trims the white space ending the text before a {{-.
func (p *tmplParser) trimLast() {
	n := len(p.t.parts)
	if n == 0 || p.t.parts[n-1].act != nil {
		return
	}
	last := &p.t.parts[n-1]
	last.text = strings.TrimRight(last.text, spaceChars)
	if last.text == "" {
		p.t.parts = p.t.parts[:n-1]
	}
}

// action parses one action whose {{ is at start; p.pos is just past it.
func (p *tmplParser) action(start int) error {
	if p.pos+1 < len(p.src) && p.src[p.pos] == '-' && isSpace(p.src[p.pos+1]) {
		p.trimLast()
		p.pos++
	}
	p.skipSpace()
	if strings.HasPrefix(p.src[p.pos:], "/*") {
		return p.comment(start)
	}
	if done, err := p.end(start); done || err != nil {
		if err == nil {
			err = fmt.Errorf("the action at byte %d is empty: put a .path in it, e.g. {{.action}}", start)
		}
		return err
	}
	if p.src[p.pos] != '.' {
		return fmt.Errorf("%q at byte %d is not supported: %s", p.word(), p.pos, hookOnlyPaths)
	}
	act := &hookAction{path: p.path()}
	for {
		p.skipSpace()
		if done, err := p.end(start); done || err != nil {
			p.t.parts = append(p.t.parts, hookPart{act: act})
			return err
		}
		if p.src[p.pos] == '.' && !p.lastSpace {
			return fmt.Errorf("the path at byte %d has an empty key: write keys between the dots, e.g. .a.b", p.pos)
		}
		if p.src[p.pos] != '|' {
			return fmt.Errorf("%q at byte %d is not supported: %s", p.word(), p.pos, hookOnlyPaths)
		}
		p.pos++
		c, err := p.call()
		if err != nil {
			return err
		}
		act.calls = append(act.calls, c)
	}
}

// end reports whether p.pos is at the action's }} (or -}} after a space)
// and steps past it; past the end of the template the action is unclosed.
func (p *tmplParser) end(start int) (bool, error) {
	rest := p.src[p.pos:]
	switch {
	case rest == "":
		return false, fmt.Errorf("the action at byte %d is not closed: end it with }}", start)
	case strings.HasPrefix(rest, "}}"):
		p.pos += 2
		return true, nil
	case strings.HasPrefix(rest, "-}}") && p.lastSpace:
		p.pos += 3
		p.trimNext = true
		return true, nil
	}
	return false, nil
}

// comment skips {{/* ... */}} from p.pos at /*.
func (p *tmplParser) comment(start int) error {
	i := strings.Index(p.src[p.pos+2:], "*/")
	if i < 0 {
		return fmt.Errorf("the comment at byte %d is not closed: end it with */}}", start)
	}
	p.pos += 2 + i + 2
	p.skipSpace()
	if done, err := p.end(start); !done {
		if err == nil {
			err = fmt.Errorf("the comment at byte %d is followed by more: a comment is alone in its {{/* */}}", start)
		}
		return err
	}
	return nil
}

func (p *tmplParser) skipSpace() {
	p.lastSpace = false
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
		p.lastSpace = true
	}
}

// isKeyChar reports whether c may be in a path's key.
func isKeyChar(c byte) bool { return c != '.' && c != '|' && c != '}' && !isSpace(c) }

// path reads .a.b.c (or .) from p.pos at its first dot.
func (p *tmplParser) path() []string {
	p.pos++
	var keys []string
	for {
		k := p.pos
		for p.pos < len(p.src) && isKeyChar(p.src[p.pos]) {
			p.pos++
		}
		if p.pos == k {
			return keys // a lone ".", or a trailing "." that the caller refuses
		}
		keys = append(keys, p.src[k:p.pos])
		if p.pos >= len(p.src) || p.src[p.pos] != '.' || p.pos+1 >= len(p.src) || !isKeyChar(p.src[p.pos+1]) {
			return keys
		}
		p.pos++
	}
}

// word returns what starts at p.pos, for an error: up to a space or }}.
func (p *tmplParser) word() string {
	rest := p.src[p.pos:]
	n := 0
	for n < len(rest) && n < 20 && !isSpace(rest[n]) && !strings.HasPrefix(rest[n:], "}}") {
		n++
	}
	if n == 0 {
		n = 1
	}
	return strings.ToValidUTF8(rest[:n], "?")
}

// call reads a function and its argument after a |.
func (p *tmplParser) call() (hookCall, error) {
	bar := p.pos - 1
	p.skipSpace()
	at := p.pos
	for p.pos < len(p.src) && (p.src[p.pos] >= 'a' && p.src[p.pos] <= 'z' || p.src[p.pos] >= 'A' && p.src[p.pos] <= 'Z' ||
		p.src[p.pos] >= '0' && p.src[p.pos] <= '9' || p.src[p.pos] == '_') {
		p.pos++
	}
	c := hookCall{fn: p.src[at:p.pos]}
	switch c.fn {
	case "":
		return c, fmt.Errorf("the | at byte %d has no function after it: %s", bar, hookFuncList)
	case "json":
		return c, nil
	case "default":
		p.skipSpace()
		s, err := p.quoted(at)
		c.text = s
		return c, err
	case "trunc":
		p.skipSpace()
		k := p.pos
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
		}
		n, err := strconv.Atoi(p.src[k:p.pos])
		if err != nil || n > MaxOutput {
			return c, fmt.Errorf("trunc at byte %d needs a number of characters from 0 to %d, e.g. trunc 80", at, MaxOutput)
		}
		c.n = n
		return c, nil
	}
	return c, fmt.Errorf("the function %q at byte %d is unknown: %s", c.fn, at, hookFuncList)
}

// quoted reads a "text" with \" and \\ escapes, for default.
// at is where default is.
func (p *tmplParser) quoted(at int) (string, error) {
	bad := fmt.Errorf(`default at byte %d needs a text in double quotes (\" and \\ escape), e.g. default "none"`, at)
	if p.pos >= len(p.src) || p.src[p.pos] != '"' {
		return "", bad
	}
	var b strings.Builder
	for i := p.pos + 1; i < len(p.src); i++ {
		switch c := p.src[i]; c {
		case '"':
			p.pos = i + 1
			return b.String(), nil
		case '\\':
			if i+1 >= len(p.src) || (p.src[i+1] != '"' && p.src[i+1] != '\\') {
				return "", bad
			}
			i++
			b.WriteByte(p.src[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", bad
}
