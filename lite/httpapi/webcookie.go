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
//
// Browsers send a host's cookies to every port of it, so the name is the
// instance's own (agnx_web_<Options.InstanceID>): two daemons reached by
// one name, directly or through SSH tunnels on localhost, no longer
// overwrite each other's sign-in. Over HTTPS (the server's own TLS, or a
// trusted proxy's X-Forwarded-Proto) the name takes the __Host- prefix,
// which browsers accept only on a Secure cookie for / without Domain: no
// other host, a sibling subdomain included, can set or shadow it.

const (
	// webCookie is the stem of the cookie's name, and the whole name
	// without an InstanceID (and before names were per instance).
	webCookie = "agnx_web"
	// hostPrefix is the prefix browsers hold to the rules of a cookie
	// bound to one host, over HTTPS only.
	hostPrefix = "__Host-"
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

// webCookieName is the cookie's name over plain HTTP for an instance id;
// an id that is not letters and digits (at most 32) is not used.
func webCookieName(id string) string {
	if id == "" || len(id) > 32 || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return webCookie
	}
	return webCookie + "_" + id
}

// webCookieName is the cookie's name for r: with the __Host- prefix over
// HTTPS.
func (s *Server) webCookieName(r *http.Request) string {
	if s.https(r) {
		return hostPrefix + s.cookie
	}
	return s.cookie
}

// https reports whether the browser reached the server over HTTPS: the
// server's own TLS, or a trusted proxy's word (X-Forwarded-Proto, else
// Forwarded's proto=, the last one: the proxy's own).
func (s *Server) https(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !s.trusted(addrOf(r.RemoteAddr)) {
		return false
	}
	proto := ""
	if v := r.Header.Values("X-Forwarded-Proto"); len(v) > 0 {
		last := v[len(v)-1]
		proto = last[strings.LastIndexByte(last, ',')+1:]
	} else if v := r.Header.Values("Forwarded"); len(v) > 0 {
		last := v[len(v)-1]
		for _, pair := range strings.Split(last[strings.LastIndexByte(last, ',')+1:], ";") {
			if k, val, ok := strings.Cut(strings.TrimSpace(pair), "="); ok && strings.EqualFold(k, "proto") {
				proto = strings.Trim(val, `"`)
			}
		}
	}
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}

// webCookieValid reports whether r carries a valid sign-in cookie called
// name for token.
func webCookieValid(r *http.Request, name, token string, now time.Time) bool {
	for i, c := range r.CookiesNamed(name) {
		if i >= webCookieMax {
			break
		}
		if verifyWebCookie(token, c.Value, now) {
			return true
		}
	}
	return false
}

// setWebCookie sets the cookie to value for maxAge (0: clears it). A
// cookie of the name older versions used, which the browser would go on
// sending to every service of this host name, is cleared too.
func (s *Server) setWebCookie(w http.ResponseWriter, r *http.Request, value string, maxAge time.Duration) {
	secure := s.https(r)
	c := &http.Cookie{Name: s.webCookieName(r), Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: secure, MaxAge: int(maxAge / time.Second)}
	if maxAge <= 0 {
		c.MaxAge = -1 // Max-Age=0: the browser deletes it now
	}
	http.SetCookie(w, c)
	if c.Name != webCookie && len(r.CookiesNamed(webCookie)) > 0 {
		http.SetCookie(w, &http.Cookie{Name: webCookie, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
			Secure: secure, MaxAge: -1})
	}
}
