package httpapi

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/agnx-lite/agnx-lite/lite/webaddr"
)

// The checks every request passes before it is routed. They stand between
// the API and web pages in the user's browser: a page may send requests to
// 127.0.0.1 (CSRF) or, with DNS rebinding, make its own name resolve to the
// daemon and read the answers. Tokens do not help when none is set, which
// is the loopback default; these checks do:
//
//   - Host must be a name the server answers to: loopback names and
//     addresses, the address the connection came in on, or a name in
//     server.allowed_hosts. A rebound name (evil.example) never is: 421.
//     Ports are not compared: an SSH tunnel or a container's port mapping
//     changes them, and a rebinding page cannot choose the name's port
//     without also choosing the name.
//   - Origin, when a browser sends one, must be the server's own origin
//     (the web UI) or one in server.allowed_origins: 403. Without Origin, a
//     request that Sec-Fetch-Site says is cross-site or same-site is
//     refused too, except a top-level navigation (a link the user clicks).
//   - A body must be JSON with its Content-Type saying so: HTML forms and
//     fetch's no-preflight "simple" requests can only send text/plain,
//     urlencoded or multipart: 415.
//   - CORS headers go only to configured origins.

// allowedHeaders are the request headers a configured origin may send.
const allowedHeaders = "Authorization, Content-Type, Last-Event-ID, X-Agnx-Events"

// edge runs the checks; on refusal it has answered and returns false.
func (s *Server) edge(w http.ResponseWriter, r *http.Request) bool {
	if !s.hostAllowed(r) {
		s.refused.note(reasonHost, r, s.caller(r))
		host := clip(hostname(r.Host), 100)
		writeProblem(w, r, http.StatusMisdirectedRequest, codeMisdirected, fmt.Sprintf(
			"this server does not answer to the name %q: if you reach it by that name, add %q to server.allowed_hosts", host, host))
		return false
	}
	origin := r.Header.Get("Origin")
	cors := false
	switch {
	case origin != "":
		ok, configured := s.originAllowed(r, origin)
		if !ok {
			s.refused.note(reasonOrigin, r, s.caller(r))
			writeProblem(w, r, http.StatusForbidden, codeOrigin, fmt.Sprintf(
				"requests from web pages at %s are refused: to allow that page, add %q to server.allowed_origins", clip(origin, 100), clip(origin, 100)))
			return false
		}
		cors = configured
	case crossSiteFetch(r):
		s.refused.note(reasonOrigin, r, s.caller(r))
		writeProblem(w, r, http.StatusForbidden, codeOrigin,
			"cross-site requests are refused: open the page from this server, or add its origin to server.allowed_origins")
		return false
	}
	if cors {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE")
			h.Set("Access-Control-Allow-Headers", allowedHeaders)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return false
		}
		h.Set("Access-Control-Expose-Headers", "Location, Retry-After, WWW-Authenticate")
	}
	if !jsonBody(r) {
		s.refused.note(reasonMediaType, r, s.caller(r))
		writeProblem(w, r, http.StatusUnsupportedMediaType, codeMediaType,
			"the body must be JSON: send it with Content-Type: application/json (curl: -H 'Content-Type: application/json')")
		return false
	}
	return true
}

// hostAllowed reports whether r's Host names this server. An empty Host
// (HTTP/1.0) comes from no browser, so it passes.
func (s *Server) hostAllowed(r *http.Request) bool {
	if r.Host == "" {
		return true
	}
	host := hostname(r.Host)
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host == "localhost" || s.hosts[host]
	}
	ip = ip.Unmap()
	if ip.IsLoopback() || ip.IsUnspecified() || s.hosts[ip.String()] {
		return true
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil {
		return false
	}
	l, err := netip.ParseAddrPort(local.String())
	return err == nil && l.Addr().Unmap().WithZone("") == ip.WithZone("")
}

// originAllowed reports whether a page at origin may call the API, and
// whether it was allowed by server.allowed_origins (so it needs CORS
// headers). The server's own origin, as the Host names it, is always
// allowed: it is the web UI's. hostAllowed has vetted r.Host already.
func (s *Server) originAllowed(r *http.Request, origin string) (ok, configured bool) {
	if s.origins[webaddr.NormalizeOrigin(origin)] {
		return true, true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false, false
	}
	return r.Host != "" && strings.EqualFold(u.Host, r.Host), false
}

// crossSiteFetch reports a request that a browser says comes from another
// site (Sec-Fetch-Site) without an Origin header: a GET from an <img> or a
// <script> of another page. A top-level navigation is let through: it
// shows the answer to the user, not to the page that linked here.
func crossSiteFetch(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
	default:
		return false
	}
	nav := (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.Header.Get("Sec-Fetch-Mode") == "navigate"
	return !nav
}

// jsonBody reports whether r's body, if it has one, is declared JSON. A
// request that may change something (not GET, HEAD or OPTIONS) must not
// declare any other type even with no body: an empty HTML form post has
// none.
func jsonBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	hasBody := r.ContentLength != 0
	if ct == "" {
		return !hasBody
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		if !hasBody {
			return true
		}
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// hostname is the host of a Host header, lower case, without port,
// brackets or a trailing dot.
func hostname(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// clip cuts s to at most n bytes, at a rune boundary, so that an
// attacker's 100 KB header is not echoed back.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
