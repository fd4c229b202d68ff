package sched

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Cron is a parsed cron expression. Two dialects are read:
//
//   - Agnx's (the Rust cron crate 0.15): 6 or 7 fields, seconds first
//     ("sec min hour day-of-month month day-of-week [year]"), days of the
//     week 1-7 with 1 = Sunday, and a day must match both day fields.
//   - Classic cron(5): 5 fields, read as "0 " + expr, days of the week 0-7
//     with 0 and 7 = Sunday, and when both day fields are restricted a day
//     matching either runs (cron(8)'s rule).
//
// Each field takes `*`, `?` (the same as `*`), numbers, names (JAN-DEC,
// SUN-SAT, full names too, any case), ranges a-b, steps */s, a/s, a-b/s,
// and comma lists of these. @yearly @annually @monthly @weekly @daily
// @midnight @hourly stand for the usual expressions. Years run 1970-2100.
type Cron struct {
	sec, min uint64 // bit n: second or minute n
	hour     uint32 // bit n: hour n
	dom      uint32 // bit n: day n of the month (1-31)
	month    uint16 // bit n: month n (1-12)
	dow      uint8  // bit n: time.Weekday n (0 = Sunday)
	years    [3]uint64
	anyYear  bool
	// either: a day matches when dom OR dow does (classic, both fields
	// restricted); otherwise both must.
	either bool
	expr   string
}

// The years a cron expression may name, as the Rust crate allows.
const (
	minYear = 1970
	maxYear = 2100
	// maxCronLen bounds the expression read: no real one comes near.
	maxCronLen = 256
)

var cronMacros = map[string]string{
	"@yearly":   "0 0 0 1 1 *",
	"@annually": "0 0 0 1 1 *",
	"@monthly":  "0 0 0 1 * *",
	"@weekly":   "0 0 0 * * 1",
	"@daily":    "0 0 0 * * *",
	"@midnight": "0 0 0 * * *",
	"@hourly":   "0 0 * * * *",
}

var monthNames = map[string]int{
	"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4,
	"may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8,
	"sep": 9, "september": 9, "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}

// dayNames maps names to Sunday = 0; each dialect shifts them to its own
// numbering before the range is read.
var dayNames = map[string]int{
	"sun": 0, "sunday": 0, "mon": 1, "monday": 1, "tue": 2, "tues": 2, "tuesday": 2,
	"wed": 3, "wednesday": 3, "thu": 4, "thurs": 4, "thursday": 4, "fri": 5, "friday": 5,
	"sat": 6, "saturday": 6,
}

// fieldSpec is one field's bounds and names.
type fieldSpec struct {
	name     string
	lo, hi   int
	names    map[string]int
	nameBase int // added to a name's value
}

// ParseCron reads expr. It fails, with a sentence saying what to fix, on
// a malformed field, a value out of range, or an expression that can never
// fire (such as February 30).
func ParseCron(expr string) (*Cron, error) {
	if len(expr) > maxCronLen {
		return nil, fmt.Errorf("cron expression of %d bytes is too long: use at most %d", len(expr), maxCronLen)
	}
	text := strings.TrimSpace(expr)
	if m, ok := cronMacros[strings.ToLower(text)]; ok {
		text = m
	}
	fields := strings.Fields(text)
	classic := len(fields) == 5
	if classic {
		fields = append([]string{"0"}, fields...)
	}
	if len(fields) != 6 && len(fields) != 7 {
		return nil, fmt.Errorf("cron expression %q has %d fields: give 6 or 7 (seconds first, as in \"0 0 9 * * MON-FRI\") or the classic 5", expr, len(strings.Fields(text)))
	}
	c := &Cron{expr: strings.TrimSpace(expr), anyYear: true}
	dow := fieldSpec{"day of week", 1, 7, dayNames, 1}
	if classic {
		dow = fieldSpec{"day of week", 0, 7, dayNames, 0}
	}
	specs := []fieldSpec{
		{"second", 0, 59, nil, 0}, {"minute", 0, 59, nil, 0}, {"hour", 0, 23, nil, 0},
		{"day of month", 1, 31, nil, 0}, {"month", 1, 12, monthNames, 0}, dow,
		{"year", minYear, maxYear, nil, 0},
	}
	var sets [7][3]uint64
	var stars [7]bool
	for i, f := range fields {
		set, star, err := parseField(f, specs[i])
		if err != nil {
			return nil, fmt.Errorf("cron expression %q: %w", expr, err)
		}
		sets[i], stars[i] = set, star
	}
	c.sec, c.min = sets[0][0], sets[1][0]
	c.hour, c.dom, c.month = uint32(sets[2][0]), uint32(sets[3][0]), uint16(sets[4][0])
	d := sets[5][0]
	if classic {
		d |= d >> 7 // 7 is Sunday too
	} else {
		d >>= 1 // 1-7 to 0-6
	}
	c.dow = uint8(d & 0x7f)
	c.either = classic && !stars[3] && !stars[5]
	if len(fields) == 7 && !stars[6] {
		c.anyYear, c.years = false, sets[6]
	}
	if c.Next(firstInstant, nil).IsZero() {
		return nil, fmt.Errorf("cron expression %q never fires: check its day, month and year fields", expr)
	}
	return c, nil
}

// String returns the expression as it was given.
func (c *Cron) String() string { return c.expr }

// parseField reads one comma list into a bit set (bit n = value n); star
// is set when the field is * or ?.
func parseField(f string, spec fieldSpec) (set [3]uint64, star bool, err error) {
	if f == "*" || f == "?" {
		star = true
	}
	for part := range strings.SplitSeq(f, ",") {
		lo, hi, step, err := parseRange(part, spec)
		if err != nil {
			return set, false, err
		}
		for v := lo; v <= hi; v += step {
			n := v // bit n = value n, but years count from minYear
			if spec.lo == minYear {
				n = v - minYear
			}
			set[n/64] |= 1 << (n % 64)
		}
	}
	return set, star, nil
}

// parseRange reads one list element: *, ?, v, a-b, with an optional /step.
func parseRange(part string, spec fieldSpec) (lo, hi, step int, err error) {
	step = 1
	base, stepText, hasStep := strings.Cut(part, "/")
	if hasStep {
		step, err = strconv.Atoi(stepText)
		if err != nil || step < 1 || step > spec.hi-spec.lo+1 {
			return 0, 0, 0, fmt.Errorf("%s step %q is not a number from 1 to %d", spec.name, stepText, spec.hi-spec.lo+1)
		}
	}
	switch {
	case base == "*" || base == "?":
		return spec.lo, spec.hi, step, nil
	case strings.Contains(base, "-"):
		a, b, _ := strings.Cut(base, "-")
		if lo, err = fieldValue(a, spec); err != nil {
			return 0, 0, 0, err
		}
		if hi, err = fieldValue(b, spec); err != nil {
			return 0, 0, 0, err
		}
		if lo > hi {
			return 0, 0, 0, fmt.Errorf("%s range %q runs backwards: write the smaller value first", spec.name, base)
		}
		return lo, hi, step, nil
	default:
		if lo, err = fieldValue(base, spec); err != nil {
			return 0, 0, 0, err
		}
		if hasStep {
			return lo, spec.hi, step, nil // a/s: from a to the end
		}
		return lo, lo, 1, nil
	}
}

// fieldValue reads a number or a name within spec's bounds.
func fieldValue(s string, spec fieldSpec) (int, error) {
	if v, ok := spec.names[strings.ToLower(s)]; ok {
		return v + spec.nameBase, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < spec.lo || v > spec.hi {
		return 0, fmt.Errorf("%s %q is not a value from %d to %d", spec.name, s, spec.lo, spec.hi)
	}
	return v, nil
}

// hasYear reports whether year y may run.
func (c *Cron) hasYear(y int) bool {
	if c.anyYear {
		return true
	}
	if y < minYear || y > maxYear {
		return false
	}
	n := y - minYear
	return c.years[n/64]&(1<<(n%64)) != 0
}

// lastYear is the last year the expression may run in.
func (c *Cron) lastYear() int {
	if c.anyYear {
		return 1 << 30
	}
	for i := 2; i >= 0; i-- {
		if c.years[i] != 0 {
			return minYear + i*64 + 63 - bits.LeadingZeros64(c.years[i])
		}
	}
	return minYear - 1
}
