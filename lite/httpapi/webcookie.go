package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The web UI's sign-in cookie. Its value is not the token but
// "<expiry unix seconds>.<base64url HMAC-SHA256(key=token, "agnx-lite web
// <expiry>")>": it proves its holder once had the token, until it expires
// or the token changes (which signs every browser out). It is HttpOnly,
// so the page's scripts never see it, and SameSite=Strict, so another
// site's page cannot make the browser send it.

const (
	// webCookie is the cookie's name.
	webCookie = "agnx_web"
	// webCookieAge is how long a sign-in lasts: 30 days.
	webCookieAge = 30 * 24 * time.Hour
	// webCookieMaxLen caps a value worth parsing: 20 digits, a dot and
	// 43 characters of MAC make 64.
	webCookieMaxLen = 64
	// webCookieMax is how many agnx_web cookies a request may offer
	// before the rest are ignored.
	webCookieMax = 4
)

// signWebCookie returns the cookie value for token, valid until expiry.
func signWebCookie(token string, expiry time.Time) string {
	exp := strconv.FormatInt(expiry.Unix(), 10)
	return exp + "." + base64.RawURLEncoding.EncodeToString(webMAC(token, exp))
}

func webMAC(token, exp string) []byte {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("agnx-lite web " + exp))
	return m.Sum(nil)
}

// verifyWebCookie reports whether value was signed with token and has not
// expired at now. Anything malformed is false; it never panics
// (FuzzWebCookie).
func verifyWebCookie(token, value string, now time.Time) bool {
	if token == "" || len(value) > webCookieMaxLen {
		return false
	}
	exp, mac, ok := strings.Cut(value, ".")
	if !ok || exp == "" || len(exp) > 20 || exp[0] == '0' || strings.Trim(exp, "0123456789") != "" {
		return false // only the canonical decimal form: one value per expiry
	}
	secs, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || secs <= now.Unix() || secs > now.Add(webCookieAge+time.Hour).Unix() {
		return false
	}
	got, err := base64.RawURLEncoding.Strict().DecodeString(mac)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	return hmac.Equal(got, webMAC(token, exp)) // constant time
}

// webCookieValid reports whether r carries a valid sign-in cookie for
// token.
func webCookieValid(r *http.Request, token string, now time.Time) bool {
	for i, c := range r.CookiesNamed(webCookie) {
		if i >= webCookieMax {
			break
		}
		if verifyWebCookie(token, c.Value, now) {
			return true
		}
	}
	return false
}

// setWebCookie sets the cookie to value for maxAge (0: clears it).
func setWebCookie(w http.ResponseWriter, r *http.Request, value string, maxAge time.Duration) {
	c := &http.Cookie{Name: webCookie, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(maxAge / time.Second)}
	if maxAge <= 0 {
		c.MaxAge = -1 // Max-Age=0: the browser deletes it now
	}
	http.SetCookie(w, c)
}
