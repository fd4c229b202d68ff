package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Who a request is from: the connection's address unless a trusted proxy
// forwarded it, then the right-most forwarded address that is not a
// trusted proxy (what the client wrote to the left is not believed). A
// forwarded request is never local.
func TestServer_Caller(t *testing.T) {
	s := New(Options{TrustedProxies: []string{"127.0.0.1", "10.0.0.0/8", "::1"}})
	tests := []struct {
		name, remote string
		headers      []string
		addr         string
		local        bool
		untrusted    bool
	}{
		{"direct loopback", "127.0.0.1:5000", nil, "127.0.0.1", true, false},
		{"direct v6 loopback", "[::1]:5000", nil, "::1", true, false},
		{"direct remote", "192.0.2.9:5000", nil, "192.0.2.9", false, false},
		{"through a trusted proxy", "127.0.0.1:5000", []string{"X-Forwarded-For: 203.0.113.9"}, "203.0.113.9", false, false},
		{"left-most is the client's word", "127.0.0.1:5000", []string{"X-Forwarded-For: 127.0.0.1, 198.51.100.1, 203.0.113.9"}, "203.0.113.9", false, false},
		{"two trusted hops", "127.0.0.1:5000", []string{"X-Forwarded-For: 203.0.113.9, 10.1.2.3"}, "203.0.113.9", false, false},
		{"several header lines", "127.0.0.1:5000", []string{"X-Forwarded-For: 198.51.100.1", "X-Forwarded-For: 203.0.113.9, 10.0.0.1"}, "203.0.113.9", false, false},
		{"with a port", "127.0.0.1:5000", []string{"X-Forwarded-For: 203.0.113.9:4711"}, "203.0.113.9", false, false},
		{"v6 in brackets", "127.0.0.1:5000", []string{"X-Forwarded-For: [2001:db8::7]:443"}, "2001:db8::7", false, false},
		{"only trusted hops", "127.0.0.1:5000", []string{"X-Forwarded-For: 127.0.0.1"}, "127.0.0.1", false, false},
		{"garbage right-most", "127.0.0.1:5000", []string{"X-Forwarded-For: 203.0.113.9, nonsense"}, "invalid IP", false, false},
		{"Forwarded", "127.0.0.1:5000", []string{`Forwarded: for=198.51.100.1, for="[2001:db8:cafe::17]:4711";proto=https`}, "2001:db8:cafe::17", false, false},
		{"Forwarded unknown", "127.0.0.1:5000", []string{"Forwarded: for=unknown"}, "invalid IP", false, false},
		{"X-Forwarded-For wins over Forwarded", "127.0.0.1:5000", []string{"Forwarded: for=198.51.100.1", "X-Forwarded-For: 203.0.113.9"}, "203.0.113.9", false, false},
		{"trusted proxy, no address", "127.0.0.1:5000", []string{"X-Forwarded-Proto: https"}, "127.0.0.1", false, false},
		{"untrusted peer's header is not believed", "192.0.2.9:5000", []string{"X-Forwarded-For: 127.0.0.1"}, "192.0.2.9", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/", nil)
			req.RemoteAddr = tt.remote
			for _, h := range tt.headers {
				k, v, _ := strings.Cut(h, ": ")
				req.Header.Add(k, v)
			}
			c := s.caller(req)
			assert.Equal(t, tt.addr, c.addr.String())
			assert.Equal(t, tt.local, c.local)
			assert.Equal(t, tt.untrusted, c.viaUntrusted)
		})
	}

	// Without trusted proxies, any forwarding header takes loopback's
	// trust away, and the address stays the connection's.
	plain := New(Options{})
	for _, h := range forwardingHeaders {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = "127.0.0.1:5000"
		req.Header.Set(h, "203.0.113.9")
		c := plain.caller(req)
		assert.False(t, c.local, h)
		assert.Equal(t, "127.0.0.1", c.addr.String(), h)
		assert.True(t, c.viaUntrusted, h)
	}
}

// FuzzForwardedFor: whatever a client writes in X-Forwarded-For or
// Forwarded, the parser never panics and reads a bounded number of hops.
func FuzzForwardedFor(f *testing.F) {
	for _, s := range []string{"203.0.113.9", "a, b, c", ",,,,", "", " ", "[::1]:80, 1.2.3.4:5", `for="[2001:db8::1]:4711";proto=https`,
		"for=unknown;by=x, for=_hidden", "for=", `for="`, strings.Repeat("1.1.1.1,", 100), "[", "]:", "%00"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, v string, forwarded bool) {
		h := http.Header{}
		if forwarded {
			h.Set("Forwarded", v)
		} else {
			h.Set("X-Forwarded-For", v)
		}
		hops := forwardedFor(h)
		assert.LessOrEqual(t, len(hops), maxForwardHops)
		for _, a := range hops {
			if a.IsValid() {
				assert.Empty(t, a.Zone())
				assert.False(t, a.Is4In6())
			}
		}
	})
}
