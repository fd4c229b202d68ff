package sched

import (
	"math/bits"
	"time"
)

// firstInstant is where ParseCron's never-fires check starts searching.
var firstInstant = time.Date(minYear, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Second)

// searchYears bounds Next's search: the Gregorian calendar repeats its
// weekdays every 400 years, so an expression that has not fired in 401
// has no day it can fire on.
const searchYears = 401

// Next returns the first time after `after` at which the expression fires,
// read on loc's wall clock (nil: UTC), or the zero time when it never
// fires again.
//
// Across daylight-saving changes it does what cron(8) does: a wall-clock
// time skipped when the clocks go forward (02:30 on the spring-forward
// day) runs once, at the first instant after the gap (03:00 new time); a
// wall-clock time that happens twice when the clocks go back runs once,
// at its first occurrence. So every expression runs at most once per
// wall-clock time, and an hourly one has a two-hour gap in real time on
// the autumn day.
func (c *Cron) Next(after time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	start := after.In(loc)
	y0, m0, d0 := start.Date()
	h0, mi0, s0 := start.Clock()
	last := min(c.lastYear(), y0+searchYears)
	for y := y0; y <= last; y++ {
		if !c.hasYear(y) {
			continue
		}
		for m := time.January; m <= time.December; m++ {
			if y == y0 && m < m0 || c.month&(1<<m) == 0 {
				continue
			}
			days := c.days(y, m)
			onStart := y == y0 && m == m0
			if onStart {
				days &^= 1<<d0 - 1
			}
			for ; days != 0; days &= days - 1 {
				d := bits.TrailingZeros32(days)
				fh, fmi, fs := 0, 0, 0
				if onStart && d == d0 {
					fh, fmi, fs = h0, mi0, s0
				}
				if t, ok := c.inDay(y, m, d, [3]int{fh, fmi, fs}, loc, after); ok {
					return t
				}
			}
		}
	}
	return time.Time{}
}

// days is the set of days of month m of year y the expression runs on
// (bit n: day n).
func (c *Cron) days(y int, m time.Month) uint32 {
	n := daysIn(y, m)
	valid := uint32(1)<<(n+1) - 2 // bits 1..n
	wd := int(time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Weekday())
	var byDow uint32
	for d := 1; d <= n; d++ {
		if c.dow&(1<<((wd+d-1)%7)) != 0 {
			byDow |= 1 << d
		}
	}
	if c.either {
		return (c.dom | byDow) & valid
	}
	return c.dom & byDow & valid
}

// daysIn is the number of days of month m of year y.
func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// inDay returns the first time of the day y-m-d, at or after the
// wall-clock floor (hour, minute, second), that is after `after`.
func (c *Cron) inDay(y int, m time.Month, d int, floor [3]int, loc *time.Location, after time.Time) (time.Time, bool) {
	for h := floor[0]; h < 24; h++ {
		if c.hour&(1<<h) == 0 {
			continue
		}
		mi0 := 0
		if h == floor[0] {
			mi0 = floor[1]
		}
		for mi := mi0; mi < 60; mi++ {
			if c.min&(1<<mi) == 0 {
				continue
			}
			s0 := 0
			if h == floor[0] && mi == floor[1] {
				s0 = floor[2]
			}
			for s := s0; s < 60; s++ {
				if c.sec&(1<<s) == 0 {
					continue
				}
				if t := wallTime(y, m, d, h, mi, s, loc); t.After(after) {
					return t, true
				}
			}
		}
	}
	return time.Time{}, false
}

// wallTime is the instant loc's clocks show y-m-d h:mi:s: the first of
// the two when the clocks go back, and the first instant after the gap
// when they went forward over it.
func wallTime(y int, m time.Month, d, h, mi, s int, loc *time.Location) time.Time {
	u := time.Date(y, m, d, h, mi, s, 0, time.UTC).Unix()
	var first, later time.Time
	for _, probe := range [2]int64{u - 86400, u + 86400} {
		_, off := time.Unix(probe, 0).In(loc).Zone()
		t := time.Unix(u-int64(off), 0).In(loc)
		if later.IsZero() || t.After(later) {
			later = t
		}
		if sameWall(t, y, m, d, h, mi, s) && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	if !first.IsZero() {
		return first
	}
	if t := time.Date(y, m, d, h, mi, s, 0, loc); sameWall(t, y, m, d, h, mi, s) {
		return t // more than one change within two days: trust the library
	}
	// In the gap: the zone in effect after it began at the instant the
	// clocks jumped.
	if begin, _ := later.ZoneBounds(); !begin.IsZero() && !begin.After(later) {
		return begin.In(loc)
	}
	return later
}

func sameWall(t time.Time, y int, m time.Month, d, h, mi, s int) bool {
	ty, tm, td := t.Date()
	th, tmi, ts := t.Clock()
	return ty == y && tm == m && td == d && th == h && tmi == mi && ts == s
}
