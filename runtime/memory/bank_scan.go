package memory

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"
)

// maxScanBytes bounds what one Scan reads.
const maxScanBytes = 64 << 20

// maxHitText is the longest text of one scanned hit.
const maxHitText = 1 << 10

// Scan finds the sections of the bank's files (MEMORY.md, the daily files
// newest first, then the world files) whose text holds q.Text, ignoring
// case: a plain substring scan, in file order, not ranked, for when there
// is no index. A daily section's date is its day and "## HH:MM" heading.
func (b *Bank) Scan(ctx context.Context, q Query) (Results, error) {
	res := Results{Mode: "substring", Note: "This is a plain substring scan of the memory files, not ranked; past conversations are not searched."}
	needle := strings.ToLower(strings.TrimSpace(q.Text))
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	if needle == "" {
		return res, nil
	}
	s := scanner{needle: needle, limit: limit, budget: maxScanBytes}
	root, err := b.openAgent()
	if err != nil {
		return res, err
	}
	defer root.Close()
	s.file(root, Dir+"/"+MemoryFile, Dir+"/"+MemoryFile, time.Time{})
	days, err := listMarkdown(root, Dir+"/"+DailyDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	slices.Reverse(days)
	for _, n := range days {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		day, err := time.ParseInLocation(DateLayout, strings.TrimSuffix(n, ".md"), b.now().Location())
		if err != nil {
			continue // not a daily file
		}
		rel := Dir + "/" + DailyDir + "/" + n
		s.file(root, rel, rel, day)
	}
	if w, err := b.openWorld(false); err == nil && w != nil {
		defer w.Close()
		names, _ := listMarkdown(w, ".")
		for _, n := range names {
			s.file(w, n, "world/"+n, time.Time{})
		}
	}
	res.Hits = s.hits
	return res, nil
}

// scanner collects the sections that hold needle.
type scanner struct {
	needle string
	limit  int
	budget int
	hits   []Hit
}

// file scans the file rel of root, cited as source; day is the daily
// file's day, or zero.
func (s *scanner) file(root *os.Root, rel, source string, day time.Time) {
	if len(s.hits) >= s.limit || s.budget <= 0 {
		return
	}
	data, err := readFile(root, rel)
	if err != nil {
		return
	}
	s.budget -= len(data)
	for _, sec := range sections(string(data)) {
		if len(s.hits) >= s.limit {
			return
		}
		if !strings.Contains(strings.ToLower(sec.text), s.needle) {
			continue
		}
		h := Hit{Source: source, Heading: sec.heading, Text: cutUTF8(strings.TrimSpace(sec.text), maxHitText)}
		if !day.IsZero() {
			h.Date = day
			if t, err := time.Parse("15:04", strings.TrimSpace(strings.TrimPrefix(sec.heading, "##"))); err == nil {
				h.Date = day.Add(time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute)
			}
		}
		s.hits = append(s.hits, h)
	}
}

type section struct{ heading, text string }

// sections splits Markdown at its "## " headings; the text before the
// first is a section without a heading.
func sections(doc string) []section {
	var out []section
	heading, start, off := "", 0, 0
	flush := func(end int) {
		if text := doc[start:end]; strings.TrimSpace(text) != "" {
			out = append(out, section{heading: heading, text: text})
		}
	}
	for line := range strings.Lines(doc) {
		if strings.HasPrefix(line, "## ") {
			flush(off)
			heading, start = strings.TrimSpace(line), off+len(line)
		}
		off += len(line)
	}
	flush(len(doc))
	return out
}
