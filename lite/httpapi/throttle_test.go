package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	attacker = "192.0.2.1"
	owner    = "198.51.100.7"
)

// call serves one request from remote (an address or address:port) with
// an optional JSON body and header lines, and returns the recorder.
func call(s *Server, remote, method, path, body string, headers ...string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if !strings.Contains(remote, "]:") && strings.Count(remote, ":") != 1 {
		remote = netip.AddrPortFrom(netip.MustParseAddr(remote), 40000).String()
	}
	req.RemoteAddr, req.Host = remote, "127.0.0.1:8080"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// locked returns how long a must still wait before a token of its is
// compared, without charging it; 0: not locked.
func (t *throttle) locked(a netip.Addr, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.m[throttleKey(a)]; s != nil && now.Before(s.until) {
		return s.until.Sub(now)
	}
	return 0
}

func signinAs(s *Server, remote, token string) *httptest.ResponseRecorder {
	return call(s, remote, "POST", "/ui/signin", `{"token":"`+token+`"}`)
}

// Wrong sign-ins from one address never hold up the owner's from another
// (a global slot once made 12 parallel guesses cost the owner 6 s, and a
// steady stream locked them out); the guessing address gets a few tries,
// then 429 with Retry-After, growing, and its tokens are not even
// compared while it waits.
func TestSignin_ThrottledPerAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Options{APIToken: "the-right-token-5f0c2a9e"})
		start := time.Now()
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(func() {
				code := signinAs(s, attacker, "wrong").Code
				assert.Contains(t, []int{http.StatusUnauthorized, http.StatusTooManyRequests}, code)
			})
		}
		wg.Wait()
		rec := signinAs(s, owner, "the-right-token-5f0c2a9e")
		assert.Equal(t, http.StatusNoContent, rec.Code)
		assert.Zero(t, time.Since(start), "the owner does not wait for the attacker's failures")

		// A steady stream locks out its own address only.
		for range 50 {
			signinAs(s, attacker, "wrong")
			assert.Equal(t, http.StatusNoContent, signinAs(s, owner, "the-right-token-5f0c2a9e").Code)
		}
		rec = signinAs(s, attacker, "the-right-token-5f0c2a9e")
		require.Equal(t, http.StatusTooManyRequests, rec.Code, "a locked-out address's token is not compared")
		assert.Contains(t, rec.Body.String(), "too many wrong tokens from your address: wait")
		assert.NotEmpty(t, rec.Header().Get("Retry-After"))
		assert.Empty(t, rec.Header().Values("Set-Cookie"))
		assert.Equal(t, http.StatusTooManyRequests, signinAs(s, attacker+":1", "wrong").Code, "any port of the address")
		assert.Zero(t, time.Since(start), "nothing sleeps")

		// Once the lock is over the address may try again.
		time.Sleep(throttleMaxLock)
		assert.Equal(t, http.StatusNoContent, signinAs(s, attacker, "the-right-token-5f0c2a9e").Code)
	})
}

// The lock doubles from a second after the free failures, up to its cap,
// and is forgotten after a quiet while or a right token.
func TestThrottle_Backoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle()
		a := netip.MustParseAddr(attacker)
		for range throttleFree {
			assert.Zero(t, th.fail(a, time.Now(), false))
			assert.Zero(t, th.locked(a, time.Now()))
		}
		want := time.Second
		for range 12 {
			got := th.fail(a, time.Now(), false)
			assert.Equal(t, min(want, throttleMaxLock), got)
			assert.Equal(t, got, th.locked(a, time.Now()))
			time.Sleep(got)
			assert.Zero(t, th.locked(a, time.Now()))
			want *= 2
		}
		time.Sleep(throttleForget)
		for range throttleFree {
			assert.Zero(t, th.fail(a, time.Now(), false), "a quiet quarter hour forgets the failures")
		}
		assert.Equal(t, time.Second, th.fail(a, time.Now(), false))
		th.succeed(a)
		assert.Zero(t, th.locked(a, time.Now()), "a right token forgets them")
		assert.Zero(t, th.size())
	})
}

// When a lock ends, one of many parallel guesses is compared, not all
// those that waited for it: an address that failed before is charged
// when admitted.
func TestThrottle_OneGuessPerLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Options{APIToken: "the-right-token-5f0c2a9e"})
		for range throttleFree + 1 {
			signinAs(s, attacker, "wrong")
		}
		require.Equal(t, http.StatusTooManyRequests, signinAs(s, attacker, "wrong").Code)
		time.Sleep(time.Second)
		var mu sync.Mutex
		codes := map[int]int{}
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				code := signinAs(s, attacker, "wrong").Code
				mu.Lock()
				codes[code]++
				mu.Unlock()
			})
		}
		wg.Wait()
		assert.Equal(t, map[int]int{http.StatusUnauthorized: 1, http.StatusTooManyRequests: 15}, codes)
	})
}

// IPv6 addresses are counted by /64: a host that holds one cannot rotate
// through it. IPv4 addresses stand alone.
func TestThrottle_Keys(t *testing.T) {
	th := newThrottle()
	now := time.Now()
	for range throttleFree + 1 {
		th.fail(netip.MustParseAddr("2001:db8:1:2::1"), now, false)
	}
	assert.NotZero(t, th.locked(netip.MustParseAddr("2001:db8:1:2:ffff::9"), now))
	assert.Zero(t, th.locked(netip.MustParseAddr("2001:db8:1:3::1"), now))
	for range throttleFree + 1 {
		th.fail(netip.MustParseAddr("192.0.2.1"), now, false)
	}
	assert.Zero(t, th.locked(netip.MustParseAddr("192.0.2.2"), now))
}

// The table holds at most its bound, however many addresses fail, and
// sweeps what is past its time.
func TestThrottle_Bounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle()
		th.max = 64
		for i := range 1000 {
			th.fail(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), time.Now(), false)
			require.LessOrEqual(t, th.size(), th.max)
		}
		time.Sleep(throttleForget)
		th.fail(netip.MustParseAddr(attacker), time.Now(), false)
		assert.Equal(t, 1, th.size(), "expired entries are swept when room is needed")
	})
}

// bearerServer is a server with an API token whose /metrics (an api
// route) answers without a loop, logging to logs.
func bearerServer(logs io.Writer, tweak ...func(*Options)) *Server {
	o := Options{APIToken: "the-right-token-5f0c2a9e", Metrics: func(io.Writer) {},
		Logger: slog.New(slog.NewJSONHandler(logs, nil))}
	for _, f := range tweak {
		f(&o)
	}
	return New(o)
}

// Bearer guesses were neither slowed nor logged (6,500 a second on one
// connection): now an address gets a few, then 429 until its lock ends,
// while the owner elsewhere is served; failures are counted in /metrics
// and logged a few lines a minute, with a count of those left out.
func TestAuth_BearerGuessesThrottled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		s := bearerServer(&logs)
		good, bad := "Authorization: Bearer the-right-token-5f0c2a9e", "Authorization: Bearer guess"
		for i := range throttleFree + 1 {
			assert.Equal(t, http.StatusUnauthorized, call(s, attacker, "GET", "/metrics", "", bad).Code, i)
		}
		for range 1000 {
			rec := call(s, attacker, "GET", "/metrics", "", good)
			require.Equal(t, http.StatusTooManyRequests, rec.Code)
			assert.Equal(t, "1", rec.Header().Get("Retry-After"))
		}
		assert.Equal(t, http.StatusOK, call(s, owner, "GET", "/metrics", "", good).Code)

		rec := call(s, owner, "GET", "/metrics", "", good)
		assert.Contains(t, rec.Body.String(), `agnx_http_auth_failures_total{route="api"} 6`+"\n")
		assert.Contains(t, rec.Body.String(), `agnx_http_refused_total{reason="throttled"} 1000`+"\n")
		assert.Contains(t, rec.Body.String(), "agnx_http_auth_throttle_addresses 1\n")

		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		assert.LessOrEqual(t, len(lines), 10, "five lines a minute for each reason at most")
		assert.NotContains(t, logs.String(), "the-right-token", "tokens are never logged")
		assert.NotContains(t, logs.String(), "guess")
		time.Sleep(time.Minute)
		logs.Reset()
		call(s, attacker, "GET", "/metrics", "", bad)
		var line struct {
			Msg       string `json:"msg"`
			Reason    string `json:"reason"`
			Client    string `json:"client"`
			NotLogged int    `json:"not_logged_before"`
		}
		require.NoError(t, json.Unmarshal(logs.Bytes(), &line), logs.String())
		assert.Equal(t, "wrong_token", line.Reason)
		assert.Equal(t, attacker, line.Client)

		logs.Reset()
		for range 10 {
			call(s, attacker, "GET", "/metrics", "", good) // locked again
		}
		assert.Contains(t, logs.String(), fmt.Sprintf(`"not_logged_before":%d`, 1000-5), "what was left out is counted")
	})
}
