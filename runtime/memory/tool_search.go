package memory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// search is recall with a query, through the Searcher.
func (t *Tool) search(ctx context.Context, q string, limit *int) runtime.Result {
	n := DefaultLimit
	if limit != nil {
		n = *limit
	}
	// Past conversations are searched as the calling session sees them:
	// by default its own person's (runtime.Viewer). A call outside a
	// session (there is none in the daemon) sees none.
	var v runtime.Viewer
	if info, ok := runtime.CallFrom(ctx); ok {
		v = info.Viewer
	}
	res, err := t.Search.Search(ctx, Query{Text: q, Limit: n, Viewer: &v})
	if err != nil {
		if ctx.Err() != nil {
			return failed("the memory search was stopped: the call was cancelled or ran out of time")
		}
		return failed("the memory search failed (" + err.Error() + "); recall without a query still works")
	}
	d := Details{Action: "recall", Query: q, Mode: res.Mode}
	for _, h := range res.Hits {
		// The texts are in the content already: the log keeps one copy.
		hj := HitJSON{Source: h.Source, Heading: h.Heading, Score: h.Score}
		if !h.Date.IsZero() {
			hj.Date = h.Date.Format(time.RFC3339)
		}
		d.Hits = append(d.Hits, hj)
	}
	return done(FormatHits(q, res), d)
}

// maxHitShown bounds the text shown of one hit: enough to answer from,
// short enough that a recall does not bloat the conversation it is part
// of (and, with it, every later search over that conversation).
const maxHitShown = 600

// FormatHits is how search results read, for the model and the CLI: a
// line saying what was searched, the note if any, then each hit as
// "[<source> <date>] <text>", best first, separated by blank lines.
func FormatHits(q string, res Results) string {
	var b strings.Builder
	if len(res.Hits) == 0 {
		fmt.Fprintf(&b, "No memories match %q.", q)
	} else {
		switch res.Mode {
		case "":
			fmt.Fprintf(&b, "Memories matching %q (best first):", q)
		default:
			fmt.Fprintf(&b, "Memories matching %q (%s search, best first):", q, res.Mode)
		}
	}
	if res.Note != "" {
		b.WriteString("\n")
		b.WriteString(res.Note)
	}
	total := b.Len()
	for i, h := range res.Hits {
		text := strings.TrimSpace(h.Text)
		if len(text) > maxHitShown {
			text = cutUTF8(text, maxHitShown) + "… [cut: the whole entry is in " + h.Source + "]"
		}
		line := "[" + cite(h) + "] " + text
		if total+len(line) > MaxRecallBytes {
			fmt.Fprintf(&b, "\n\n[%d more results left out: the output is capped at %d KiB]", len(res.Hits)-i, MaxRecallBytes>>10)
			break
		}
		b.WriteString("\n\n")
		b.WriteString(line)
		total += len(line) + 2
	}
	return b.String()
}

// cite is a hit's source and date: the time alone when the source is a
// daily file that names the day ("memory/daily/2026-11-20.md 14:05"),
// else the date and time in the daemon's local time.
func cite(h Hit) string {
	if h.Date.IsZero() {
		return h.Source
	}
	d := h.Date.Local()
	if strings.Contains(h.Source, d.Format(DateLayout)) {
		return h.Source + " " + d.Format("15:04")
	}
	return h.Source + " " + d.Format("2006-01-02 15:04")
}
