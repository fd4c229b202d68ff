package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWebCookie_RoundTrip(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	v := signWebCookie("tok", now.Add(webCookieAge))
	assert.True(t, verifyWebCookie("tok", v, now))
	assert.True(t, verifyWebCookie("tok", v, now.Add(webCookieAge-time.Second)))
	assert.False(t, verifyWebCookie("tok", v, now.Add(webCookieAge)), "expired at its expiry")
	assert.False(t, verifyWebCookie("tok2", v, now), "another token")
	assert.False(t, verifyWebCookie("", v, now), "no token, no cookie")
	assert.LessOrEqual(t, len(v), webCookieMaxLen)
}

// FuzzWebCookie: the parser of a value any client sends never panics, and
// accepts nothing but what signWebCookie makes for the token.
func FuzzWebCookie(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	good := signWebCookie("tok", now.Add(time.Hour))
	for _, s := range []string{good, good + "=", "0" + good, "", ".", "1.", ".x", "18000036000.", "-1.AAAA",
		"+1800003600." + strings.SplitN(good, ".", 2)[1], "99999999999999999999.x", "1800003600.%%%", "１.x",
		strings.Repeat("9", 70), "1800003600.." + good} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !verifyWebCookie("tok", v, now) {
			return
		}
		exp, _, _ := strings.Cut(v, ".")
		secs, err := strconv.ParseInt(exp, 10, 64)
		require.NoError(t, err)
		assert.Equal(t, signWebCookie("tok", time.Unix(secs, 0)), v, "only the canonical value is accepted")
		assert.Greater(t, secs, now.Unix())
	})
}

// TestSignin_Penalty: wrong tokens are answered one at a time, each after
// the penalty, however many arrive at once; a right one waits its turn
// and is not penalized.
func TestSignin_Penalty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Options{APIToken: "right"})
		post := func(token string) int {
			req := httptest.NewRequest("POST", "/ui/signin", strings.NewReader(`{"token":"`+token+`"}`))
			req.RemoteAddr, req.Host = "192.0.2.1:1", "127.0.0.1:8080"
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			return rec.Code
		}
		start := time.Now()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { assert.Equal(t, http.StatusUnauthorized, post("wrong")) })
		}
		wg.Wait()
		assert.Equal(t, 4*signinPenalty, time.Since(start), "serialized")

		start = time.Now()
		assert.Equal(t, http.StatusNoContent, post("right"))
		assert.Zero(t, time.Since(start))
	})
}
