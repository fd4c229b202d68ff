package plugin

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// limiter rate-limits log lines that a misbehaving plugin can repeat
// without bound (garbage on stdout, chatter on stderr, drops): at most n
// per window; the rest are counted and the count is logged with the next
// line let through. Safe for concurrent use.
type limiter struct {
	mu         sync.Mutex
	n          int
	window     time.Duration
	start      time.Time
	used       int
	suppressed int
}

func newLimiter(n int, window time.Duration) *limiter {
	return &limiter{n: n, window: window}
}

// log writes the line at level unless the window's budget is spent.
func (l *limiter) log(log *slog.Logger, level slog.Level, msg string, args ...any) {
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.start) >= l.window {
		l.start, l.used = now, 0
	}
	if l.used >= l.n {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	l.used++
	skipped := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	if skipped > 0 {
		args = append(args, "suppressed_before", skipped)
	}
	log.Log(context.Background(), level, msg, args...)
}
