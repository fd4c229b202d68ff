package docs

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// statement is a sentence, a table row or a line of code of a file: the
// unit in which a figure is read together with what it is about.
type statement struct {
	file string
	line int
	text string
	row  bool // a table row: its cells are "header: text" between " | "
}

var (
	listItemRE  = regexp.MustCompile(`^\s*(?:[-*+]|\d+\.)\s`)
	separatorRE = regexp.MustCompile(`^\s*\|?\s*:?-{3,}`)
)

// paragraph collects the lines of one paragraph with where each began in
// the joined text, so that a sentence can say its line.
type paragraph struct {
	text  strings.Builder
	lines []int // line number of each piece
	offs  []int // offset of each piece in text
}

func (p *paragraph) add(n int, s string) {
	if p.text.Len() > 0 {
		p.text.WriteByte(' ')
	}
	p.lines = append(p.lines, n)
	p.offs = append(p.offs, p.text.Len())
	p.text.WriteString(s)
}

// flush appends the paragraph's sentences to out and empties it.
func (p *paragraph) flush(file string, out []statement) []statement {
	text := p.text.String()
	for _, s := range sentences(text) {
		n := p.lines[0]
		for i, off := range p.offs {
			if off <= s.off {
				n = p.lines[i]
			}
		}
		out = append(out, statement{file: file, line: n, text: s.text})
	}
	*p = paragraph{}
	return out
}

// mdStatements reads a Markdown file as statements: the sentences of its
// paragraphs and list items, each heading, each table row (each cell
// prefixed with its column's header, so "target: ≤ 25 MiB" says what the
// figure is), and each line of code.
func mdStatements(file, text string) []statement {
	var out []statement
	var p paragraph
	var header []string
	ls := mdLines(text)
	for i, l := range ls {
		trim := strings.TrimSpace(l.text)
		switch {
		case l.code:
			out = p.flush(file, out)
			out = append(out, statement{file: file, line: l.n, text: trim})
		case trim == "":
			out = p.flush(file, out)
		case strings.HasPrefix(trim, "|"):
			out = p.flush(file, out)
			if separatorRE.MatchString(trim) {
				continue
			}
			cells := tableCells(trim)
			if i+1 < len(ls) && separatorRE.MatchString(ls[i+1].text) {
				header = cells
				continue
			}
			out = append(out, statement{file: file, line: l.n, text: tableRow(header, cells), row: true})
		case headingRE.MatchString(l.text):
			out = p.flush(file, out)
			out = append(out, statement{file: file, line: l.n, text: trim})
		case listItemRE.MatchString(l.text):
			out = p.flush(file, out)
			p.add(l.n, trim)
		default:
			p.add(l.n, trim)
		}
	}
	return p.flush(file, out)
}

// commentStatements reads the comments of a Makefile or shell script as
// statements: consecutive comment lines are a paragraph.
func commentStatements(file, text string) []statement {
	var out []statement
	var p paragraph
	for i, s := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(s)
		if !strings.HasPrefix(trim, "#") || strings.HasPrefix(trim, "#!") {
			out = p.flush(file, out)
			continue
		}
		if body := strings.TrimSpace(strings.TrimLeft(trim, "#")); body != "" {
			p.add(i+1, body)
		}
	}
	return p.flush(file, out)
}

func tableCells(row string) []string {
	row = strings.ReplaceAll(strings.Trim(row, " |"), `\|`, "\x00")
	cells := strings.Split(row, "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|"))
	}
	return cells
}

func tableRow(header, cells []string) string {
	parts := make([]string, len(cells))
	for i, c := range cells {
		parts[i] = c
		if i < len(header) && header[i] != "" && c != "" {
			parts[i] = header[i] + ": " + c
		}
	}
	return strings.Join(parts, " | ")
}

type sentence struct {
	off  int
	text string
}

// sentences splits a paragraph after a full stop (or ! or ?) followed by
// a space and a capital, a code span or emphasis: "e.g. the" stays one
// sentence, which errs on the side of reading a figure with its topic.
func sentences(text string) []sentence {
	var out []sentence
	start := 0
	for i := 0; i < len(text)-2; i++ {
		if !strings.ContainsRune(".!?", rune(text[i])) || text[i+1] != ' ' {
			continue
		}
		r, _ := utf8.DecodeRuneInString(text[i+2:])
		if unicode.IsUpper(r) || r == '`' || r == '*' {
			out = append(out, sentence{start, strings.TrimSpace(text[start : i+1])})
			start = i + 2
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, sentence{start, s})
	}
	return out
}
