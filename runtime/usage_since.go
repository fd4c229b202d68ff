package runtime

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxSinceLen bounds a since value: the longest accepted form is an
// RFC 3339 time with nanoseconds and a zone.
const maxSinceLen = 40

// maxSinceDays bounds a span in days (a century).
const maxSinceDays = 36600

// ParseSince reads where a usage report starts, as a person writes it: a
// span back from now ("7d", "24h", "90m"), "today" (midnight in loc), a
// date ("2026-11-01", midnight in loc) or an RFC 3339 time. Empty is the
// zero time: everything kept. The error is one sentence for the user.
func ParseSince(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.Local
	}
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("since %q is not a time: use a span back from now such as 7d or 24h, today, or a date such as 2026-11-01",
		clipText(s, maxSinceLen))
	switch {
	case s == "":
		return time.Time{}, nil
	case len(s) > maxSinceLen:
		return time.Time{}, bad
	case s == "today":
		y, m, d := now.In(loc).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, loc), nil
	case strings.HasSuffix(s, "d") && !strings.ContainsAny(s, "+-"):
		n, err := strconv.Atoi(strings.TrimSuffix(s, "d"))
		if err != nil || n < 1 || n > maxSinceDays {
			return time.Time{}, bad
		}
		return now.Add(-time.Duration(n) * 24 * time.Hour), nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 || d > maxSinceDays*24*time.Hour {
			return time.Time{}, bad
		}
		return now.Add(-d), nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, bad
}

// clipText cuts s to n bytes for a message.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
