package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// How docs/reference/configuration.md is written: the rows of the source
// walk as Markdown tables, their doc comments as text.

// writeKeys writes a file's keys: a table of the keys at its top (and at
// the top of each container, such as agent.yaml's spec), then a section
// for each object there, with its description and a table of its keys.
func writeKeys(t *testing.T, b *strings.Builder, rows []keyRow, defaults map[string]string, containers map[string]bool) {
	var top, sections []keyRow
	below := map[string][]keyRow{}
	for _, r := range rows {
		parts := strings.Split(strings.ReplaceAll(r.path, "[]", ""), ".")
		depth := 1 // of the keys at the top
		if containers[parts[0]] {
			depth = 2
		}
		section := strings.Join(parts[:min(depth, len(parts))], ".")
		switch {
		case containers[r.path]:
		case len(parts) > depth:
			below[section] = append(below[section], r)
		case r.object:
			sections = append(sections, r)
		default:
			top = append(top, r)
		}
	}
	b.WriteString("\n")
	writeTable(t, b, top, defaults)
	for _, s := range sections {
		assert.NotEmpty(t, s.doc, "%s has no doc comment: write one on its field, it is the page's description", s.path)
		fmt.Fprintf(b, "\n### %s\n\n%s\n\n", s.path, markdown(s.doc))
		writeTable(t, b, below[s.path], defaults)
	}
}

func writeTable(t *testing.T, b *strings.Builder, rows []keyRow, defaults map[string]string) {
	b.WriteString("| key | type | default | description |\n| --- | --- | --- | --- |\n")
	for _, r := range rows {
		assert.NotEmpty(t, r.doc, "%s has no doc comment: write one on its field, it is the page's description", r.path)
		def := ""
		if !r.object {
			if def = defaults[r.path]; def == "" {
				def = "—"
			}
		}
		doc := cell(r.doc)
		if r.see != "" {
			doc += " Each has the keys of an entry of [`" + r.see + "`](#" + strings.ReplaceAll(r.see, ".", "") + ") in agent.yaml."
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", r.path, r.kind, def, doc)
	}
}

// markdown renders a doc comment as Markdown: its paragraphs as text,
// its indented lines as code blocks.
func markdown(doc string) string {
	var blocks, para []string
	code := false
	flush := func() {
		if len(para) == 0 {
			return
		}
		if code {
			blocks = append(blocks, strings.Join(para, "\n"))
		} else {
			blocks = append(blocks, escapeText(strings.Join(para, " ")))
		}
		para = nil
	}
	for _, line := range strings.Split(strings.TrimSpace(doc), "\n") {
		isCode := strings.HasPrefix(line, "\t")
		if isCode != code || strings.TrimSpace(line) == "" {
			flush()
		}
		code = isCode
		switch {
		case isCode:
			para = append(para, "    "+line[1:])
		case strings.TrimSpace(line) != "":
			para = append(para, strings.TrimSpace(line))
		}
	}
	flush()
	return strings.Join(blocks, "\n\n")
}

// cell makes a doc comment one line of a Markdown table cell.
func cell(doc string) string {
	return strings.ReplaceAll(escapeText(strings.Join(strings.Fields(doc), " ")), "|", `\|`)
}

// escapeText keeps Markdown from reading a comment's text as markup: <id>
// as HTML, * as emphasis. Code spans are left as they are.
func escapeText(s string) string {
	var b strings.Builder
	code := false
	for _, r := range s {
		switch {
		case r == '`':
			code = !code
		case code:
		case r == '<':
			b.WriteString("&lt;")
			continue
		case r == '>':
			b.WriteString("&gt;")
			continue
		case r == '*':
			b.WriteString(`\*`)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
