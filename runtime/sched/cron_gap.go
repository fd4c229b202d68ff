package sched

import (
	"math"
	"math/bits"
	"time"
)

// MinGap returns the shortest time between two consecutive runs of the
// expression on the wall clock, computed from its fields (no run is
// sampled), and false when it runs at most once.
//
// The runs of a day are the product of its hours, minutes and seconds,
// so two consecutive runs are either in one minute (the closest two
// seconds), in consecutive run minutes of one hour (the last second of
// one to the first of the next), in consecutive run hours of one day (the
// last minute and second of one to the first of the next), or on
// consecutive run days (the day's last run to the next day's first). The
// shortest of the four is the answer.
//
// On the day the clocks go forward a run after the gap comes that much
// sooner in real time (at most once a year); the service's spacing of an
// agent's runs (MinRunGap) holds then too.
func (c *Cron) MinGap() (time.Duration, bool) {
	best := int64(math.MaxInt64)
	sLo, sHi := lowHigh(c.sec)
	mLo, mHi := lowHigh(c.min)
	hLo, hHi := lowHigh(uint64(c.hour))
	if d, ok := minStep(c.sec); ok {
		best = min(best, d)
	}
	if d, ok := minStep(c.min); ok {
		best = min(best, d*60-(sHi-sLo))
	}
	if d, ok := minStep(uint64(c.hour)); ok {
		best = min(best, d*3600-((mHi*60+sHi)-(mLo*60+sLo)))
	}
	if d, ok := c.minDayStep(); ok {
		best = min(best, d*86400-((hHi*3600+mHi*60+sHi)-(hLo*3600+mLo*60+sLo)))
	}
	if best == math.MaxInt64 {
		return 0, false
	}
	return time.Duration(best) * time.Second, true
}

// lowHigh returns the lowest and highest set bit of a non-empty set.
func lowHigh(set uint64) (lo, hi int64) {
	return int64(bits.TrailingZeros64(set)), int64(63 - bits.LeadingZeros64(set))
}

// minStep returns the smallest distance between two consecutive set bits,
// and false when fewer than two are set.
func minStep(set uint64) (int64, bool) {
	best, prev := int64(math.MaxInt64), int64(-1)
	for ; set != 0; set &= set - 1 {
		n := int64(bits.TrailingZeros64(set))
		if prev >= 0 {
			best = min(best, n-prev)
		}
		prev = n
	}
	return best, best != math.MaxInt64
}

// minDayStep returns the fewest days between two consecutive days the
// expression runs on, and false when it runs on fewer than two. Without a
// year field it reads one 400-year cycle of the Gregorian calendar (whose
// weekdays then repeat) and the turn into the next; with one, the years it
// names. It stops at 1, which nothing beats.
func (c *Cron) minDayStep() (int64, bool) {
	first, last := 2000, 2400
	if !c.anyYear {
		first, last = minYear, maxYear
	}
	best, prev, seen := int64(math.MaxInt64), int64(0), false
	for y := first; y <= last; y++ {
		if !c.hasYear(y) {
			continue
		}
		for m := time.January; m <= time.December; m++ {
			if c.month&(1<<m) == 0 {
				continue
			}
			base := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Unix()/86400 - 1 // day 0 of the month
			for days := c.days(y, m); days != 0; days &= days - 1 {
				n := base + int64(bits.TrailingZeros32(days))
				if seen {
					if best = min(best, n-prev); best == 1 {
						return 1, true
					}
				}
				prev, seen = n, true
			}
		}
	}
	return best, best != math.MaxInt64
}
