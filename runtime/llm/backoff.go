package llm

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// backoff computes full-jitter exponential delays: a uniform random delay in
// [0, min(cap, base*2^retry)]. Full jitter spreads clients that failed
// together (a restarted server) instead of making them retry in lockstep.
type backoff struct {
	base, cap time.Duration
}

func (b backoff) delay(retry int) time.Duration {
	ceil := b.cap
	if retry < 32 {
		if d := b.base << retry; d > 0 && d < ceil {
			ceil = d
		}
	}
	if ceil <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceil) + 1))
}

// ParseRetryAfter reads a Retry-After header value, either delay-seconds or
// an HTTP-date, relative to now. It reports false when v is empty or
// malformed. A date in the past gives 0.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// sleepCtx waits for d or until ctx ends, whichever is first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
