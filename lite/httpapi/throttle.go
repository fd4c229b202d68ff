package httpapi

import (
	"net/netip"
	"sync"
	"time"
)

// throttle slows token guessing per client address: each address may send
// throttleFree wrong tokens (bearer or sign-in); every further one locks it
// out for twice as long as the last, from a second up to throttleMaxLock,
// and while it is locked its tokens are not even compared (429). An
// address forgets its failures throttleForget after the last one, or when
// it sends a right token. Other addresses are never slowed: the owner
// signing in from elsewhere does not wait for an attacker's failures.
//
// An address that has failed before is charged with a failure when it is
// admitted, before its token is compared (a right token takes it back):
// so when a lock ends, one of many parallel requests gets through, not
// all of those that were waiting for it.
//
// The table is bounded in size and time, with no goroutine: entries past
// their time are swept when the table is full (at most once a second), and
// when every entry is live one is dropped to make room, so a flood of
// addresses costs memory up to throttleMax entries and no more. IPv6
// clients are counted by /64, which one host commonly holds whole.
type throttle struct {
	mu    sync.Mutex
	m     map[netip.Addr]*strikes
	swept time.Time // when expired entries were last swept
	max   int
}

// strikes are one address's wrong tokens.
type strikes struct {
	failures int
	last     time.Time // the last failure
	until    time.Time // locked until then
}

const (
	throttleFree    = 5
	throttleMaxLock = 5 * time.Minute
	throttleForget  = 15 * time.Minute
	throttleMax     = 4096
)

func newThrottle() *throttle {
	return &throttle{m: map[netip.Addr]*strikes{}, max: throttleMax}
}

// throttleKey is the table's key for a: the address, or an IPv6 address's
// /64.
func throttleKey(a netip.Addr) netip.Addr {
	if a.Is6() && !a.Is4In6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// admit is asked before a token from a is compared: it returns how long a
// must still wait (0: compare it), and whether a was charged with a
// failure in advance, which fail is then told.
func (t *throttle) admit(a netip.Addr, now time.Time) (wait time.Duration, charged bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.m[throttleKey(a)]
	switch {
	case s == nil:
		return 0, false
	case now.Before(s.until):
		return s.until.Sub(now), false
	}
	s.strike(now)
	return 0, true
}

// fail counts a wrong token from a (unless admit charged it already), and
// returns how long a is now locked out (0: not yet).
func (t *throttle) fail(a netip.Addr, now time.Time, charged bool) time.Duration {
	k := throttleKey(a)
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.m[k]
	switch {
	case s == nil:
		t.makeRoom(now)
		s = &strikes{}
		t.m[k] = s
	case charged:
		return max(s.until.Sub(now), 0)
	}
	return s.strike(now)
}

// strike counts one failure at now and returns the lock it brings.
func (s *strikes) strike(now time.Time) time.Duration {
	if now.Sub(s.last) >= throttleForget {
		*s = strikes{}
	}
	s.failures++
	s.last = now
	if s.failures <= throttleFree {
		return 0
	}
	lock := throttleMaxLock
	if n := s.failures - throttleFree - 1; n < 16 {
		lock = min(time.Second<<n, throttleMaxLock)
	}
	s.until = now.Add(lock)
	return lock
}

// succeed forgets a's failures: it holds the token.
func (t *throttle) succeed(a netip.Addr) {
	k := throttleKey(a)
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, k)
}

// makeRoom keeps the table under its bound before an entry is added:
// expired entries go first, then, if every one is live, any one.
func (t *throttle) makeRoom(now time.Time) {
	if len(t.m) < t.max {
		return
	}
	if now.Sub(t.swept) >= time.Second || now.Before(t.swept) {
		t.swept = now
		for k, s := range t.m {
			if now.Sub(s.last) >= throttleForget && !now.Before(s.until) {
				delete(t.m, k)
			}
		}
	}
	for k := range t.m {
		if len(t.m) < t.max {
			break
		}
		delete(t.m, k) // map order is random: no address can count on staying
	}
}

// size is how many addresses the table holds.
func (t *throttle) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
