package tools

import (
	"html"
	"strings"
)

// skipped elements have no readable text.
var skipped = []string{"script", "style", "noscript", "template", "svg", "head"}

// blocks start a new line.
var blocks = map[string]bool{
	"p": true, "div": true, "br": true, "li": true, "tr": true, "h1": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "section": true, "article": true, "header": true, "footer": true,
	"pre": true, "blockquote": true, "table": true, "ul": true, "ol": true, "hr": true, "title": true,
}

// HTMLText extracts the readable text of an HTML document: scripts and
// styles go, tags become spaces or line breaks, entities are decoded and
// runs of blank space collapse. It is forgiving: any input gives text.
func HTMLText(doc string) string {
	var b strings.Builder
	lower := strings.ToLower(doc)
	for i := 0; i < len(doc); {
		if doc[i] != '<' {
			j := strings.IndexByte(doc[i:], '<')
			if j < 0 {
				j = len(doc) - i
			}
			b.WriteString(html.UnescapeString(doc[i : i+j]))
			i += j
			continue
		}
		end := strings.IndexByte(doc[i:], '>')
		if end < 0 {
			break
		}
		closing := strings.HasPrefix(lower[i+1:], "/")
		tag := tagName(lower[i+1 : i+end])
		i += end + 1
		if !closing && skip(tag) {
			if k := strings.Index(lower[i:], "</"+tag); k >= 0 {
				i += k
			} else {
				i = len(doc)
			}
			continue
		}
		if blocks[tag] {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return collapse(b.String())
}

func tagName(s string) string {
	s = strings.TrimLeft(s, "/!")
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ' ' || c == '/' || c == '\t' || c == '\n' || c == '\r' {
			return s[:i]
		}
	}
	return s
}

func skip(tag string) bool {
	for _, s := range skipped {
		if tag == s {
			return true
		}
	}
	return false
}

// collapse trims each line, squeezes spaces and drops blank lines: the
// model's context is better spent on text than on layout.
func collapse(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if line = strings.Join(strings.Fields(line), " "); line != "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
