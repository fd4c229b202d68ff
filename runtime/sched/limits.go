package sched

import (
	"fmt"
	"sync"
	"time"
)

// The ceiling on the turns an agent's schedules start.
const (
	// DefaultMaxTurnsPerHour is Options.MaxTurnsPerHour when it is 0: a
	// task every minute, or a few heartbeats and tasks, fit under it.
	DefaultMaxTurnsPerHour = 60
	// MaxTurnsPerHourLimit bounds the setting, and so the start times
	// kept per agent (8 bytes each).
	MaxTurnsPerHourLimit = 3600
	// turnWindow is the span the ceiling counts over.
	turnWindow = time.Hour
	// maxSkipCodes bounds the causes counted apart; others count as
	// "other".
	maxSkipCodes = 16
)

// turnLog keeps, per agent, when its schedules started turns in the last
// turnWindow, oldest first: exactly the turns the ceiling counts. An
// agent none of whose turns is that recent keeps nothing (sweep).
type turnLog struct {
	mu     sync.Mutex
	max    int
	starts map[string][]int64 // Unix nanoseconds
	swept  int64
}

func newTurnLog(max int) *turnLog {
	if max <= 0 {
		max = DefaultMaxTurnsPerHour
	}
	return &turnLog{max: min(max, MaxTurnsPerHourLimit), starts: map[string][]int64{}}
}

// take counts a turn of agent's starting at now and reports true, or,
// when agent's schedules started the most they may in the last hour,
// reports false and how many that is.
func (l *turnLog) take(agent string, now time.Time) (int, bool) {
	ns := now.UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(ns)
	starts := recent(l.starts[agent], ns)
	if len(starts) >= l.max {
		l.starts[agent] = starts
		return len(starts), false
	}
	l.starts[agent] = append(starts, ns)
	return len(starts) + 1, true
}

// giveBack forgets the turn take counted at now: its run started nothing.
func (l *turnLog) giveBack(agent string, now time.Time) {
	ns := now.UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	starts := l.starts[agent]
	for i := len(starts) - 1; i >= 0; i-- {
		if starts[i] == ns {
			l.starts[agent] = append(starts[:i], starts[i+1:]...)
			return
		}
	}
}

// sweep, at most once a window, drops the agents with no recent turn.
func (l *turnLog) sweep(now int64) {
	if now-l.swept < int64(turnWindow) {
		return
	}
	l.swept = now
	for agent, starts := range l.starts {
		if len(recent(starts, now)) == 0 {
			delete(l.starts, agent)
		}
	}
}

// recent is starts without those older than the window before now.
func recent(starts []int64, now int64) []int64 {
	i := 0
	for i < len(starts) && starts[i] <= now-int64(turnWindow) {
		i++
	}
	if i == 0 {
		return starts
	}
	return append(starts[:0], starts[i:]...)
}

// ceilingReason is the recorded reason of a run the ceiling skipped.
func ceilingReason(agent string, n int) string {
	return fmt.Sprintf("agent %s's schedules and heartbeat started as many turns in the last hour as they may (%d): "+
		"this run is skipped; raise scheduler.max_turns_per_hour or make its schedules run less often", agent, n)
}

// Counts is what the service did with runs besides firing them, since it
// was made (for metrics).
type Counts struct {
	// Held counts runs held back to keep an agent's runs MinRunGap apart.
	Held uint64
	// Skipped counts skipped runs by cause: SkipMissed, SkipTurnCeiling
	// and the Codes of Firers' SkipErrors.
	Skipped map[string]uint64
}

// tally keeps the Counts.
type tally struct {
	mu      sync.Mutex
	held    uint64
	skipped map[string]uint64
}

func (t *tally) hold() {
	t.mu.Lock()
	t.held++
	t.mu.Unlock()
}

func (t *tally) skip(code string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.skipped == nil {
		t.skipped = map[string]uint64{}
	}
	if _, ok := t.skipped[code]; !ok && (len(t.skipped) >= maxSkipCodes || code == "") {
		code = "other" // a Firer's codes are a fixed few; this bounds a confused one
	}
	t.skipped[code]++
}

// Counts returns how many runs were held back and skipped.
func (s *Service) Counts() Counts {
	s.tally.mu.Lock()
	defer s.tally.mu.Unlock()
	c := Counts{Held: s.tally.held, Skipped: make(map[string]uint64, len(s.tally.skipped))}
	for k, v := range s.tally.skipped {
		c.Skipped[k] = v
	}
	return c
}
