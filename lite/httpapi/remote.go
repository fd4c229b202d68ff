package httpapi

import (
	"net/http"
	"net/netip"
	"strings"
)

// Who is calling. The connection's address is the caller only when nothing
// stands between: a reverse proxy (Caddy, nginx) or a tunnel (cloudflared,
// ngrok, tailscale) on the box connects from 127.0.0.1 for every client it
// serves, anywhere. So a request that carries any forwarding header is
// never judged local, whoever connected; and a proxy named in
// server.trusted_proxies may say which address it forwards, which the
// throttle (throttle.go) and the logs then use.
//
// The forwarded address is the right-most one in X-Forwarded-For (or, when
// a request has none, RFC 7239 Forwarded) that is not a trusted proxy:
// each proxy appends the address it got the request from, so everything to
// the left of the first hop we trust was written by the client and may be
// anything.

// forwardingHeaders are the headers proxies, CDNs and tunnels add. Their
// presence alone means a proxy may stand between: a local program has no
// reason to send one.
var forwardingHeaders = func() []string {
	var out []string
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto",
		"X-Forwarded-Port", "X-Forwarded-Server", "X-Original-Forwarded-For", "X-Real-IP", "X-Client-IP",
		"X-Cluster-Client-IP", "Client-IP", "True-Client-IP", "CF-Connecting-IP", "CF-Connecting-IPv6", "CF-Ray",
		"CDN-Loop", "Fly-Client-IP", "Fastly-Client-IP", "X-Envoy-External-Address", "X-ProxyUser-Ip", "Via",
		"Tailscale-User-Login"} {
		out = append(out, http.CanonicalHeaderKey(h))
	}
	return out
}()

// maxForwardHops bounds how many entries of a forwarding header are read,
// from the right: a client may send a megabyte of commas.
const maxForwardHops = 32

// caller is who sent a request, as the server judges it.
type caller struct {
	// addr is the client's address: the connection's, or the one a
	// trusted proxy forwarded. Zero when a trusted proxy forwarded one
	// that does not parse.
	addr netip.Addr
	// local is a loopback connection that no proxy forwarded: a program
	// of this machine, trusted when no token is set.
	local bool
	// forwarded is the header that says a proxy may stand between ("":
	// none); viaUntrusted, that the proxy is not in trusted_proxies, so
	// addr is the proxy's.
	forwarded    string
	viaUntrusted bool
}

// caller judges r.
func (s *Server) caller(r *http.Request) caller {
	peer := addrOf(r.RemoteAddr)
	fwd := forwardingHeader(r.Header)
	if fwd == "" {
		return caller{addr: peer, local: peer.IsLoopback()}
	}
	c := caller{addr: peer, forwarded: fwd}
	if !s.trusted(peer) {
		c.viaUntrusted = true
		return c
	}
	hops := forwardedFor(r.Header)
	if len(hops) == 0 {
		return c // the proxy said nothing of the client: it is the caller
	}
	for _, h := range hops { // right to left
		if !h.IsValid() || !s.trusted(h) {
			c.addr = h
			return c
		}
	}
	c.addr = hops[len(hops)-1] // every hop is ours: the left-most began it
	return c
}

// trusted reports whether a is in server.trusted_proxies.
func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardingHeader returns the first forwarding header h has, or "".
func forwardingHeader(h http.Header) string {
	for _, k := range forwardingHeaders {
		if _, ok := h[k]; ok {
			return k
		}
	}
	return ""
}

// forwardedFor returns the addresses X-Forwarded-For lists (Forwarded's
// for= when there is no X-Forwarded-For), right-most first, at most
// maxForwardHops; an entry that is no address (Forwarded's "unknown" or an
// obfuscated name) is the zero Addr.
func forwardedFor(h http.Header) []netip.Addr {
	key, forwarded := "X-Forwarded-For", false
	if len(h[key]) == 0 {
		key, forwarded = "Forwarded", true
	}
	lines := h[key]
	var out []netip.Addr
	for i := len(lines) - 1; i >= 0 && len(out) < maxForwardHops; i-- {
		line := lines[i]
		for len(out) < maxForwardHops {
			j := strings.LastIndexByte(line, ',')
			entry := strings.TrimSpace(line[j+1:])
			if forwarded {
				entry = forwardedForParam(entry)
			}
			if entry != "" || j >= 0 {
				out = append(out, addrOf(entry))
			}
			if j < 0 {
				break
			}
			line = line[:j]
		}
	}
	return out
}

// forwardedForParam returns the for= value of one Forwarded element
// ("for=192.0.2.60;proto=https"), unquoted, or "".
func forwardedForParam(elem string) string {
	for _, pair := range strings.Split(elem, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// addrOf parses an address as a connection or a proxy writes it: "ip",
// "ip:port", "[v6]" or "[v6]:port"; zoneless and unmapped, or the zero
// Addr.
func addrOf(s string) netip.Addr {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return netip.Addr{}
		}
		a = ap.Addr()
	}
	return a.Unmap().WithZone("")
}
