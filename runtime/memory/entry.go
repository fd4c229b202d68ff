package memory

import "strings"

// plainEntry neutralises the structure a daily file's readers parse, so
// that what a model remembers (text a tool fetched, perhaps) stays inside
// its own entry: the chunker cuts a daily file at "## " lines and dates
// each piece by the heading's HH:MM, and recall's reader sees "#"
// headings and "---" rules as the bounds of entries, days and sections.
// Line breaks are made "\n" (a lone "\r" ends a line for some readers);
// a line whose first non-blank character is '#', or that is a rule or a
// setext underline ("---", "=", "***", "___"), gets a backslash before
// that character, which Markdown shows as the character itself.
func plainEntry(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	var out strings.Builder
	out.Grow(len(s) + 16)
	for line := range strings.Lines(s) {
		body := strings.TrimLeft(line, " \t")
		if needsEscape(body) {
			out.WriteString(line[:len(line)-len(body)])
			out.WriteByte('\\')
			out.WriteString(body)
			continue
		}
		out.WriteString(line)
	}
	return out.String()
}

// needsEscape reports whether a line (its leading blanks cut) would be
// read as structure: a heading, a setext underline (= or - alone, any
// number) or a rule (3 or more of * or _), blanks between allowed.
func needsEscape(line string) bool {
	if strings.HasPrefix(line, "#") {
		return true
	}
	t := strings.TrimRight(line, " \t\n")
	if t == "" || !strings.ContainsRune("-=*_", rune(t[0])) {
		return false
	}
	n := 0
	for i := range len(t) {
		switch t[i] {
		case t[0]:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3 || t[0] == '-' || t[0] == '='
}
