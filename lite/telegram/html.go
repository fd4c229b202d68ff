package telegram

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// HTML turns a model's Markdown into Telegram's HTML subset: **bold**,
// *italic* and _italic_, ~~strike~~, `code`, fenced ``` blocks (with their
// language), [links](https://...), # headings (bold) and - lists (•).
// Everything else is text, with <, > and & escaped, so the result always
// parses: every tag is one of b, i, s, code, pre, a; tags are balanced and
// never cross lines (spans do not reach over a newline); code and pre hold
// only text. A delimiter without its partner stays as written.
func HTML(md string) string {
	md = strings.ToValidUTF8(md, "\uFFFD")
	var b strings.Builder
	b.Grow(len(md) + len(md)/8)
	lines := strings.SplitAfter(md, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence, lang, ok := openFence(line); ok {
			i = codeBlock(&b, lines, i, fence, lang)
			continue
		}
		body, nl := strings.CutSuffix(line, "\n")
		blockLine(&b, body)
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// openFence recognises a line opening a fenced block: ``` or ~~~ (three or
// more), optionally indented up to three spaces, then a language word.
func openFence(line string) (fence, lang string, ok bool) {
	t := strings.TrimRight(line, "\r\n")
	t = strings.TrimLeft(t, " ")
	if len(line)-len(strings.TrimLeft(line, " ")) > 3 || len(t) < 3 {
		return "", "", false
	}
	c := t[0]
	if c != '`' && c != '~' {
		return "", "", false
	}
	n := 0
	for n < len(t) && t[n] == c {
		n++
	}
	if n < 3 {
		return "", "", false
	}
	info := strings.TrimSpace(t[n:])
	if c == '`' && strings.Contains(info, "`") {
		return "", "", false
	}
	lang, _, _ = strings.Cut(info, " ")
	return t[:n], lang, true
}

// closesFence reports whether line closes a block opened with fence.
func closesFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == ""
}

// codeBlock writes the block opened at lines[i] and returns the index of
// its last line. An unclosed block runs to the end of the text.
func codeBlock(b *strings.Builder, lines []string, i int, fence, lang string) int {
	if l := langClass(lang); l != "" {
		b.WriteString(`<pre><code class="language-` + l + `">`)
	} else {
		b.WriteString("<pre>")
	}
	var code strings.Builder
	j := i + 1
	for ; j < len(lines) && !closesFence(lines[j], fence); j++ {
		code.WriteString(lines[j])
	}
	escape(b, strings.TrimSuffix(code.String(), "\n"))
	if langClass(lang) != "" {
		b.WriteString("</code>")
	}
	b.WriteString("</pre>")
	if j < len(lines) && strings.HasSuffix(lines[j], "\n") {
		b.WriteByte('\n')
	}
	return j
}

// langClass keeps a language name only if it is plain (letters, digits,
// + - # _ .), so it can sit in an attribute unescaped.
func langClass(lang string) string {
	if len(lang) > 32 {
		return ""
	}
	for _, r := range lang {
		if !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("+-#_.", r))) {
			return ""
		}
	}
	return lang
}

// blockLine writes one line outside code blocks: headings become bold,
// list markers bullets, the rest goes through the inline rules.
func blockLine(b *strings.Builder, line string) {
	t := strings.TrimLeft(line, " ")
	if h := strings.TrimLeft(t, "#"); len(h) < len(t) && len(t)-len(h) <= 6 && strings.HasPrefix(h, " ") {
		b.WriteString("<b>")
		inline(b, strings.TrimSpace(h), fBold)
		b.WriteString("</b>")
		return
	}
	if (strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "+ ")) && len(t) > 2 {
		b.WriteString(line[:len(line)-len(t)])
		b.WriteString("• ")
		inline(b, t[2:], 0)
		return
	}
	inline(b, line, 0)
}

// Flags say which spans enclose the text being written, so a span is never
// opened inside itself or inside a link.
const (
	fBold = 1 << iota
	fItalic
	fStrike
	fLink
)

// misses remembers, per delimiter, the offset from which it has no
// closing partner in the text: a later opening has none either, which
// keeps a line full of lone delimiters linear.
type misses map[string]int

func (m *misses) hit(d string, from int) bool {
	at, ok := (*m)[d]
	return ok && from >= at
}

func (m *misses) miss(d string, from int) {
	if *m == nil {
		*m = misses{}
	}
	if at, ok := (*m)[d]; !ok || from < at {
		(*m)[d] = from
	}
}

// inline writes s with the inline rules; spans nest but never repeat.
func inline(b *strings.Builder, s string, flags int) {
	var m misses
	for i := 0; i < len(s); {
		if n := span(b, s, i, flags, &m); n > 0 {
			i += n
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		escapeRune(b, r)
		i += w
	}
}

// span writes the span starting at s[i] if there is one, returning the
// bytes it used (0: none).
func span(b *strings.Builder, s string, i, flags int, m *misses) int {
	switch c := s[i]; {
	case c == '`':
		return codeSpan(b, s, i, m)
	case c == '[' && flags&fLink == 0:
		return link(b, s, i, flags, m)
	case (c == '*' || c == '_') && i+1 < len(s) && s[i+1] == c && flags&fBold == 0:
		return delimited(b, s, i, s[i:i+2], "b", flags|fBold, m)
	case c == '~' && strings.HasPrefix(s[i:], "~~") && flags&fStrike == 0:
		return delimited(b, s, i, "~~", "s", flags|fStrike, m)
	case (c == '*' || c == '_') && flags&fItalic == 0:
		return delimited(b, s, i, s[i:i+1], "i", flags|fItalic, m)
	}
	return 0
}

// codeSpan handles `code` (any run of backticks, closed by the same run).
func codeSpan(b *strings.Builder, s string, i int, m *misses) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	tick := s[i : i+n]
	end := -1
	if !m.hit(tick, i+n) {
		end = strings.Index(s[i+n:], tick)
	}
	if end < 0 {
		m.miss(tick, i+n)
	}
	if end <= 0 {
		escape(b, tick)
		return n
	}
	b.WriteString("<code>")
	escape(b, s[i+n:i+n+end])
	b.WriteString("</code>")
	return 2*n + end
}

// delimited handles a span between two equal delimiters: the opening one
// must be followed by a non-space, the closing one preceded by one; for
// "_" both must sit at word edges (snake_case stays as written).
func delimited(b *strings.Builder, s string, i int, d, tag string, flags int, m *misses) int {
	start := i + len(d)
	if start >= len(s) || s[start] == ' ' || (d[0] == '_' && i > 0 && wordByte(s[i-1])) || m.hit(d, start) {
		return 0
	}
	for j := start + 1; j+len(d) <= len(s); j++ {
		if s[j:j+len(d)] != d || s[j-1] == ' ' {
			continue
		}
		if len(d) == 1 && j+1 < len(s) && s[j+1] == d[0] {
			j++ // part of a longer run: not this span's end
			continue
		}
		if d[0] == '_' && j+len(d) < len(s) && wordByte(s[j+len(d)]) {
			continue
		}
		b.WriteString("<" + tag + ">")
		inline(b, s[start:j], flags)
		b.WriteString("</" + tag + ">")
		return j + len(d) - i
	}
	m.miss(d, start)
	return 0
}

func wordByte(c byte) bool {
	return c >= utf8.RuneSelf || c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// link handles [text](url) with an http, https, tg or mailto url.
func link(b *strings.Builder, s string, i, flags int, m *misses) int {
	if m.hit("](", i) {
		return 0
	}
	mid := strings.Index(s[i:], "](")
	if mid < 0 {
		m.miss("](", i)
		return 0
	}
	end := strings.IndexByte(s[i+mid+2:], ')')
	if end < 0 {
		m.miss("](", i) // no ")" after any later "](" either
		return 0
	}
	text, url := s[i+1:i+mid], s[i+mid+2:i+mid+2+end]
	if text == "" || !safeURL(url) {
		return 0
	}
	b.WriteString(`<a href="`)
	escapeAttr(b, url)
	b.WriteString(`">`)
	inline(b, text, flags|fLink)
	b.WriteString("</a>")
	return mid + 3 + end
}

func safeURL(u string) bool {
	if strings.ContainsAny(u, " \t\n<>\"") {
		return false
	}
	l := strings.ToLower(u)
	for _, p := range []string{"https://", "http://", "tg://", "mailto:"} {
		if strings.HasPrefix(l, p) && len(u) > len(p) {
			return true
		}
	}
	return false
}

// escape writes s as HTML text.
func escape(b *strings.Builder, s string) {
	for _, r := range s {
		escapeRune(b, r)
	}
}

func escapeRune(b *strings.Builder, r rune) {
	switch r {
	case '<':
		b.WriteString("&lt;")
	case '>':
		b.WriteString("&gt;")
	case '&':
		b.WriteString("&amp;")
	default:
		b.WriteRune(r)
	}
}

func escapeAttr(b *strings.Builder, s string) {
	for _, r := range s {
		if r == '"' {
			b.WriteString("&quot;")
			continue
		}
		escapeRune(b, r)
	}
}

// EscapeHTML returns s as Telegram HTML text.
func EscapeHTML(s string) string {
	var b strings.Builder
	escape(&b, strings.ToValidUTF8(s, "\uFFFD"))
	return b.String()
}
