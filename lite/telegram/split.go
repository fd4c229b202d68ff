package telegram

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxMessage is Telegram's limit on a message's text, in UTF-16 code
// units after entity parsing.
const MaxMessage = 4096

// textLen measures s as Telegram does (UTF-16 code units). Markdown only
// shrinks when rendered, so a piece of Markdown within the limit renders
// within it too.
func textLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// Split cuts a Markdown reply into pieces of at most limit UTF-16 units:
// between paragraphs where it can, else between lines, then words. A fenced
// code block is kept whole unless it alone is too long; then it is cut
// between its lines and each piece is closed and reopened with the same
// fence and language, so each piece renders on its own.
func Split(md string, limit int) []string {
	if limit <= 0 {
		limit = MaxMessage
	}
	md = strings.TrimSpace(md)
	if textLen(md) <= limit {
		if md == "" {
			return nil
		}
		return []string{md}
	}
	var pieces []string
	for _, blk := range blocks(md) {
		pieces = append(pieces, cutBlock(blk, limit)...)
	}
	return pack(pieces, limit, true)
}

// blocks cuts md into paragraphs and fenced code blocks, each with the
// blank lines that follow it, so that concatenating them gives md back.
func blocks(md string) []string {
	var out []string
	lines := strings.SplitAfter(md, "\n")
	start := 0 // byte offset of the current block
	pos := 0
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence, _, ok := openFence(line); ok {
			if pos > start {
				out = append(out, md[start:pos])
				start = pos
			}
			for pos += len(line); i+1 < len(lines); {
				i++
				pos += len(lines[i])
				if closesFence(lines[i], fence) {
					break
				}
			}
			for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "" {
				i++
				pos += len(lines[i])
			}
			out = append(out, md[start:pos])
			start = pos
			continue
		}
		pos += len(line)
		if strings.TrimSpace(line) == "" && pos > start && (i+1 == len(lines) || strings.TrimSpace(lines[i+1]) != "") {
			out = append(out, md[start:pos])
			start = pos
		}
	}
	if pos > start {
		out = append(out, md[start:pos])
	}
	return out
}

// cutBlock returns blk as pieces each within limit.
func cutBlock(blk string, limit int) []string {
	if textLen(blk) <= limit {
		return []string{blk}
	}
	first, _, _ := strings.Cut(blk, "\n")
	if fence, lang, ok := openFence(first + "\n"); ok {
		return cutCode(blk, fence, lang, limit)
	}
	var out []string
	for _, line := range strings.SplitAfter(blk, "\n") {
		if textLen(line) <= limit {
			out = append(out, line)
			continue
		}
		for _, w := range strings.SplitAfter(line, " ") {
			out = append(out, hardCut(w, limit)...)
		}
	}
	return out
}

// cutCode cuts a fenced block between its lines; each piece is a whole
// block of its own.
func cutCode(blk, fence, lang string, limit int) []string {
	open := fence + lang + "\n"
	closing := fence + "\n"
	_, body, _ := strings.Cut(strings.TrimRight(blk, "\n\t "), "\n")
	if i := strings.LastIndexByte(body, '\n'); i >= 0 && closesFence(body[i+1:], fence) {
		body = body[:i+1]
	} else if i < 0 && closesFence(body, fence) {
		body = ""
	}
	room := limit - textLen(open) - textLen(closing) - 1
	if room < 1 {
		return hardCut(blk, limit)
	}
	var lines []string
	for _, l := range strings.SplitAfter(body, "\n") {
		lines = append(lines, hardCut(l, room)...)
	}
	var out []string
	for _, group := range pack(lines, room, false) {
		if !strings.HasSuffix(group, "\n") {
			group += "\n"
		}
		out = append(out, open+group+closing)
	}
	return out
}

// hardCut cuts s into pieces of at most limit units, between runes.
func hardCut(s string, limit int) []string {
	var out []string
	for textLen(s) > limit {
		n, i := 0, 0
		for i < len(s) {
			r, w := utf8.DecodeRuneInString(s[i:])
			if n+utf16.RuneLen(r) > limit {
				break
			}
			n += utf16.RuneLen(r)
			i += w
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// pack joins pieces (each within limit) greedily into chunks within limit;
// with trim, the whitespace at the edges of each chunk goes.
func pack(pieces []string, limit int, trim bool) []string {
	var out []string
	var cur strings.Builder
	n := 0
	flush := func() {
		t := cur.String()
		if trim {
			t = strings.TrimSpace(t)
		}
		if t != "" {
			out = append(out, t)
		}
		cur.Reset()
		n = 0
	}
	for _, p := range pieces {
		pl := textLen(p)
		if n+pl > limit && n > 0 {
			flush()
		}
		cur.WriteString(p)
		n += pl
	}
	flush()
	return out
}
