package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// root is the repository, seen from this package's folder.
const root = ".."

// markdownFiles returns every Markdown file of the repository, relative
// to root and slash-separated: README.md, the manual under docs/ and the
// packages' pointers. Test data (agents/testdata holds the parent
// project's own READMEs, unchanged) and hidden or generated folders are
// not ours to check.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	skip := map[string]bool{"testdata": true, "node_modules": true, "dist": true, "bin": true}
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (skip[name] || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !generated[rel] {
				out = append(out, rel)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, out, "README.md")
	return out
}

// generated are Markdown files that commands write and git ignores: make
// bench's report of this machine's figures, which labels the budgets of
// older aims beside its figures (a make test after a make bench failed on
// it).
var generated = map[string]bool{"bench/last.md": true}

// readFile reads a file given relative to root.
func readFile(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(data)
}

// line is one line of a Markdown file with what the file's structure
// says of it.
type line struct {
	n    int // 1-based
	text string
	code bool // inside a fenced code block, or a fence itself
}

// mdLines splits a Markdown file into lines, marking fenced code blocks
// (``` or ~~~, indented at most three spaces), where nothing is a heading
// or a link.
func mdLines(text string) []line {
	var out []line
	fence := ""
	for i, s := range strings.Split(text, "\n") {
		trim := strings.TrimLeft(s, " ")
		indent := len(s) - len(trim)
		isFence := indent <= 3 && (strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~"))
		switch {
		case fence == "" && isFence:
			fence = trim[:3]
			out = append(out, line{i + 1, s, true})
		case fence != "":
			if isFence && strings.HasPrefix(trim, fence) && strings.TrimSpace(strings.TrimLeft(trim, fence[:1])) == "" {
				fence = ""
			}
			out = append(out, line{i + 1, s, true})
		default:
			out = append(out, line{i + 1, s, false})
		}
	}
	return out
}

// blankCode blanks inline code spans (`x`, or two backticks around one),
// keeping line breaks so that offsets still give lines: what a span holds
// is shown as typed, so a [a](b) inside one is no link.
func blankCode(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		end := strings.Index(string(b[i+n:]), strings.Repeat("`", n))
		if end < 0 { // no closing run: the ticks are literal
			i += n
			continue
		}
		stop := i + n + end + n
		for j := i; j < stop; j++ {
			if b[j] != '\n' {
				b[j] = ' '
			}
		}
		i = stop
	}
	return string(b)
}

var (
	headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$`)
	htmlIDRE  = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	mdLinkRE  = regexp.MustCompile(`!?\[([^\[\]]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)`)
	refDefRE  = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:[ \t]+(\S+)`)
	htmlTagRE = regexp.MustCompile(`<[^>]+>`)
)

// anchors returns the anchors a Markdown file offers: each heading's, as
// GitHub derives them (duplicates numbered -1, -2 in order), and explicit
// <a id> / <a name> ones.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, l := range mdLines(text) {
		if l.code {
			continue
		}
		for _, m := range htmlIDRE.FindAllStringSubmatch(l.text, -1) {
			out[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if out[s] {
			for i := 1; ; i++ {
				if c := s + "-" + strconv.Itoa(i); !out[c] {
					s = c
					break
				}
			}
		}
		out[s] = true
	}
	return out
}

// slug is GitHub's anchor for a heading: the heading's text as rendered
// (code spans, links and tags reduced to their text), lowercased, with
// everything but letters, marks, digits, connector punctuation (_),
// hyphens and spaces removed, and each space made a hyphen.
func slug(heading string) string {
	text := mdLinkRE.ReplaceAllString(heading, "$1")
	text = htmlTagRE.ReplaceAllString(text, "")
	text = strings.ReplaceAll(text, "`", "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) ||
			unicode.Is(unicode.M, r) || unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// link is one link target found in a file, with its line.
type link struct {
	line   int
	target string
}

// links returns the link targets of a Markdown file: inline links and
// images (their text may run over lines, as wrapped prose does), and
// reference definitions, outside code.
func links(text string) []link {
	var prose strings.Builder
	for _, l := range mdLines(text) {
		if !l.code {
			prose.WriteString(l.text)
		}
		prose.WriteByte('\n')
	}
	s := blankCode(prose.String())
	lineAt := func(off int) int { return strings.Count(s[:off], "\n") + 1 }
	var out []link
	for _, m := range refDefRE.FindAllStringSubmatchIndex(s, -1) {
		out = append(out, link{lineAt(m[0]), strings.Trim(s[m[2]:m[3]], "<>")})
	}
	for _, m := range mdLinkRE.FindAllStringSubmatchIndex(s, -1) {
		out = append(out, link{lineAt(m[0]), s[m[4]:m[5]]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out
}
