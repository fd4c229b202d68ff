package memory

import (
	"strings"
	"time"
	"unicode/utf8"
)

// maxChunk bounds one indexed entry, in bytes: a longer section is cut
// into several entries at paragraph, then line, then rune boundaries.
const maxChunk = 1536

// chunk is one entry of a memory file before it is indexed.
type chunk struct {
	heading string
	text    string
	date    time.Time
}

// section is a heading and the lines under it.
type section struct {
	heading string
	body    string
}

// splitSections cuts Markdown at its heading lines: with dailyOnly, only
// at "## " lines (the daily file's entries); else at every ATX heading.
// Text before the first heading is a section with no heading.
func splitSections(content string, dailyOnly bool) []section {
	var out []section
	cur := section{}
	var body strings.Builder
	emit := func() {
		cur.body = strings.TrimSpace(body.String())
		if cur.heading != "" || cur.body != "" {
			out = append(out, cur)
		}
		body.Reset()
	}
	for line := range strings.Lines(content) {
		if isHeading(line, dailyOnly) {
			emit()
			cur = section{heading: strings.TrimSpace(line)}
			continue
		}
		body.WriteString(line)
	}
	emit()
	return out
}

func isHeading(line string, dailyOnly bool) bool {
	if dailyOnly {
		return strings.HasPrefix(line, "## ")
	}
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	return n > 0 && n <= 6 && n < len(line) && (line[n] == ' ' || line[n] == '\t')
}

// pack groups the paragraphs of body into pieces of at most max bytes.
func pack(body string, max int) []string {
	var out []string
	var cur strings.Builder
	add := func(p string) {
		if cur.Len() > 0 && cur.Len()+2+len(p) > max {
			out = append(out, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteString("\n\n")
		}
		cur.WriteString(p)
	}
	for _, para := range strings.Split(body, "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		for _, piece := range cutLong(para, max) {
			add(piece)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// cutLong cuts s into pieces of at most max bytes, at line ends or spaces
// where it can and at rune boundaries where it must.
func cutLong(s string, max int) []string {
	var out []string
	for len(s) > max {
		i := strings.LastIndexByte(s[:max], '\n')
		if i <= 0 {
			i = strings.LastIndexByte(s[:max], ' ')
		}
		if i <= 0 {
			i = max
			for i > 0 && !utf8.RuneStart(s[i]) {
				i--
			}
			if i == 0 {
				i = max // not UTF-8: any cut will do
			}
		}
		if p := strings.TrimSpace(s[:i]); p != "" {
			out = append(out, p)
		}
		s = strings.TrimLeft(s[i:], "\n ")
	}
	if s = strings.TrimSpace(s); s != "" {
		out = append(out, s)
	}
	return out
}

// chunkDaily cuts a daily file (memory/daily/YYYY-MM-DD.md) into its
// "## HH:MM" entries, each dated with the file's day and the entry's time
// (the day alone when the heading is no time). The "# YYYY-MM-DD" title
// is not an entry.
func chunkDaily(day time.Time, content string) []chunk {
	var out []chunk
	for _, sec := range splitSections(content, true) {
		if sec.heading == "" {
			sec.body = dropTitle(sec.body)
		}
		date := day
		if hm, err := time.Parse("15:04", strings.TrimSpace(strings.TrimPrefix(sec.heading, "##"))); err == nil {
			date = day.Add(time.Duration(hm.Hour())*time.Hour + time.Duration(hm.Minute())*time.Minute)
		}
		for _, p := range pack(sec.body, maxChunk) {
			out = append(out, chunk{heading: sec.heading, text: p, date: date})
		}
	}
	return out
}

// dropTitle removes a first "# ..." line.
func dropTitle(body string) string {
	if strings.HasPrefix(body, "# ") {
		_, rest, _ := strings.Cut(body, "\n")
		return strings.TrimSpace(rest)
	}
	return body
}

// chunkDoc cuts MEMORY.md or a world file into its sections and their
// paragraph groups, dated with the file's modification time.
func chunkDoc(mtime time.Time, content string) []chunk {
	var out []chunk
	for _, sec := range splitSections(content, false) {
		pieces := pack(sec.body, maxChunk)
		if len(pieces) == 0 && sec.heading != "" {
			pieces = []string{sec.heading} // a heading alone still says something
		}
		for _, p := range pieces {
			out = append(out, chunk{heading: sec.heading, text: p, date: mtime})
		}
	}
	return out
}
