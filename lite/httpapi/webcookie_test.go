package httpapi

import (
	"strconv"
	"strings"
	"testing"
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
