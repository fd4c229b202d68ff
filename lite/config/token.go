package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strings"

	"github.com/agnx-lite/agnx-lite/lite/webaddr"
)

// What a token must be to guard the server, and when the server counts as
// reachable from elsewhere: bound beyond loopback, answering to a name
// that is not a loopback one (a reverse proxy's or a tunnel's public name,
// which reaches the server from 127.0.0.1), or behind trusted proxies.

const (
	// minTokenLen is the shortest token accepted beyond loopback: guessing
	// 16 random characters over the network is out of reach, guessing "x"
	// is not.
	minTokenLen = 16
	// minTokenBits is the least tokenBits accepted beyond loopback. It is
	// low on purpose: the estimate is crude and must not refuse a random
	// token (16 hex digits score 53 typically, under 28 never in a
	// million draws; 16 decimal digits, under 24 about once in a
	// million); it catches what a person typed: one character repeated,
	// abcd... or 1234..., a pattern over two or three characters.
	minTokenBits = 24
	// maxTrustedProxies bounds server.trusted_proxies: every request is
	// matched against it.
	maxTrustedProxies = 64
)

// tokenProblem returns the key and the sentence for a token that cannot
// protect the server as reachable: one with spaces around it (it could
// never match, as clients' are trimmed), or, beyond loopback, one shorter
// than minTokenLen or trivially guessable. Serve asks again after flags
// changed the host.
func (s *Server) tokenProblem() (path, msg string) {
	where := s.reach()
	for _, t := range []struct {
		key string
		v   string
	}{{"server.api_token", s.APIToken.Value()}, {"server.admin_token", s.AdminToken.Value()}} {
		switch {
		case t.v == "":
		case strings.TrimSpace(t.v) != t.v:
			return t.key, fmt.Sprintf("%s has spaces or line breaks around it: remove them", t.key)
		case where == "":
		case len(t.v) < minTokenLen:
			return t.key, fmt.Sprintf("%s is too short to guard %s: use at least %d characters, e.g. from `openssl rand -hex 32`",
				t.key, where, minTokenLen)
		case tokenBits(t.v) < minTokenBits:
			return t.key, fmt.Sprintf("%s is too easy to guess (a character repeated, a run like abcd or 1234, or too few different characters) to guard %s: use a random one, e.g. from `openssl rand -hex 32`",
				t.key, where)
		}
	}
	return "", ""
}

// CheckBind refuses to serve clients beyond this machine without a token
// that can guard it: on a non-loopback address, or answering to a name
// that is not a loopback one (a reverse proxy or a tunnel on the box
// reaches the server from 127.0.0.1 for clients anywhere), or behind
// trusted proxies. Validate checks the same, but serve's flags may have
// changed the host since: serve asks again.
func (s *Server) CheckBind() error {
	const set = "set server.api_token (e.g. api_token: ${AGNX_API_TOKEN}, made with `openssl rand -hex 32`)"
	if s.APIToken.Value() == "" {
		switch name := s.publicName(); {
		case !loopbackHost(s.Host):
			return fmt.Errorf("refusing to serve on %s without a token: %s or bind 127.0.0.1", s.Host, set)
		case name != "":
			return fmt.Errorf("refusing to answer to %s (server.allowed_hosts) without a token, as clients anywhere reach that name: %s or take it out of server.allowed_hosts", name, set)
		case len(s.TrustedProxies) > 0:
			return fmt.Errorf("refusing to serve behind server.trusted_proxies without a token, as clients anywhere reach a proxy: %s or remove server.trusted_proxies", set)
		}
	}
	if _, msg := s.tokenProblem(); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// reach says how the server can be reached from beyond this machine, as a
// sentence's object ("0.0.0.0", "a server reached as pi.local"), or ""
// when it cannot: bound to loopback, answering only to loopback names, no
// trusted proxy.
func (s *Server) reach() string {
	switch name := s.publicName(); {
	case !loopbackHost(s.Host):
		return s.Host
	case name != "":
		return "a server reached as " + name
	case len(s.TrustedProxies) > 0:
		return "a server behind server.trusted_proxies"
	}
	return ""
}

// publicName returns the first name in allowed_hosts that is not a
// loopback one (a proxy's or a tunnel's public name, the box's LAN
// name), or "".
func (s *Server) publicName() string {
	for _, h := range s.AllowedHosts {
		if n := webaddr.NormalizeHost(h); n != "" && !loopbackHost(n) {
			return n
		}
	}
	return ""
}

// loopbackHost reports whether host is a loopback name or address: only
// this machine can connect.
func loopbackHost(host string) bool {
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// tokenBits estimates how many bits a guesser must find to hit t: each
// character that does not go on a run of the two before it (aaa, abc,
// 975) counts log2 of the number of different characters t uses. A pair
// (aa, ab) is not a run: random tokens have them.
func tokenBits(t string) float64 {
	rs := []rune(t)
	distinct := map[rune]bool{}
	free := 0
	for i, r := range rs {
		distinct[r] = true
		if i < 2 || r-rs[i-1] != rs[i-1]-rs[i-2] {
			free++
		}
	}
	if len(distinct) < 2 {
		return 0
	}
	return float64(free) * math.Log2(float64(len(distinct)))
}
