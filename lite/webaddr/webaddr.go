package webaddr

import (
	"net/netip"
	"net/url"
	"strings"
)

// NormalizeOrigin returns origin as browsers send it (scheme://host[:port],
// lower case, no trailing slash), or "" when it is not an http(s) origin.
// Config validation uses it too.
func NormalizeOrigin(origin string) string {
	u, err := url.Parse(strings.TrimSuffix(origin, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// NormalizeHost returns a server.allowed_hosts entry as the server's Host
// check compares it, or "" when it is neither a DNS name nor an IP address
// (a port, a scheme or a path is not part of it).
func NormalizeHost(host string) string {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Unmap().String()
	}
	h = strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "" || len(h) > 253 {
		return ""
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return ""
		}
	}
	return h
}

// ParseProxy returns a server.trusted_proxies entry (an address or a CIDR
// range) as the range it names; ok is false when it is neither, or when it
// names every address (trusting everyone is trusting no proxy). Config
// validation uses it too.
func ParseProxy(s string) (p netip.Prefix, ok bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		a = a.Unmap().WithZone("")
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || p.Bits() == 0 {
		return netip.Prefix{}, false
	}
	if p.Addr().Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, false
		}
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), true
}
