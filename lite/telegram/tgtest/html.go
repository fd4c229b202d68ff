package tgtest

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// allowed are the tags of Telegram's HTML parse mode.
var allowed = map[string]bool{"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "code": true, "pre": true, "a": true, "span": true,
	"tg-spoiler": true, "blockquote": true, "tg-emoji": true}

// ValidateHTML checks text as Telegram's HTML parse mode would, a little
// more strictly: only its tags, balanced and properly nested; < > & only
// as entities (&lt; &gt; &amp; &quot; or numeric); a carries an href;
// nothing but text inside code, and only code inside pre; no a inside a.
func ValidateHTML(text string) error {
	if !utf8.ValidString(text) {
		return errors.New("text must be encoded in UTF-8")
	}
	var stack []string
	for i := 0; i < len(text); {
		switch text[i] {
		case '>':
			return fmt.Errorf("unexpected > at byte offset %d", i)
		case '&':
			n, err := entity(text[i:])
			if err != nil {
				return fmt.Errorf("%v at byte offset %d", err, i)
			}
			i += n
		case '<':
			end := strings.IndexByte(text[i:], '>')
			if end < 0 {
				return fmt.Errorf("unclosed start tag at byte offset %d", i)
			}
			var err error
			if stack, err = tag(stack, text[i+1:i+end]); err != nil {
				return fmt.Errorf("%v at byte offset %d", err, i)
			}
			i += end + 1
		default:
			i++
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("can't find end tag corresponding to start tag %q", stack[len(stack)-1])
	}
	return nil
}

func entity(s string) (int, error) {
	end := strings.IndexByte(s, ';')
	if end < 0 || end > 10 {
		return 0, errors.New("unsupported entity")
	}
	name := s[1:end]
	switch {
	case name == "lt" || name == "gt" || name == "amp" || name == "quot":
	case strings.HasPrefix(name, "#") && len(name) > 1:
	default:
		return 0, fmt.Errorf("unsupported entity &%s;", name)
	}
	return end + 1, nil
}

// tag applies one tag (the text between < and >) to the stack of open
// tags.
func tag(stack []string, t string) ([]string, error) {
	if name, ok := strings.CutPrefix(t, "/"); ok {
		if len(stack) == 0 || stack[len(stack)-1] != name {
			return nil, fmt.Errorf("unmatched end tag %q", name)
		}
		return stack[:len(stack)-1], nil
	}
	name, attrs, _ := strings.Cut(t, " ")
	if !allowed[name] {
		return nil, fmt.Errorf("unsupported start tag %q", name)
	}
	parent := ""
	if len(stack) > 0 {
		parent = stack[len(stack)-1]
	}
	switch {
	case parent == "code":
		return nil, fmt.Errorf("tag %q inside code", name)
	case parent == "pre" && name != "code":
		return nil, fmt.Errorf("tag %q inside pre", name)
	case name == "a" && contains(stack, "a"):
		return nil, errors.New("nested links")
	case name == "a" && !(strings.HasPrefix(attrs, `href="`) && strings.HasSuffix(attrs, `"`)):
		return nil, errors.New("a link without href")
	case name == "code" && attrs != "" && (parent != "pre" || !strings.HasPrefix(attrs, `class="language-`)):
		return nil, fmt.Errorf("bad attributes %q for code", attrs)
	case name != "a" && name != "code" && name != "span" && name != "tg-emoji" && attrs != "":
		return nil, fmt.Errorf("unexpected attributes for %q", name)
	}
	return append(stack, name), nil
}

// PlainHTML is the text a user sees of valid Telegram HTML: the tags
// dropped and the entities turned back into characters.
func PlainHTML(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			if end := strings.IndexByte(s[i:], '>'); end >= 0 {
				i += end
				continue
			}
		case '&':
			if end := strings.IndexByte(s[i:], ';'); end > 0 {
				if r, ok := map[string]string{"&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": `"`}[s[i:i+end+1]]; ok {
					b.WriteString(r)
					i += end
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }
