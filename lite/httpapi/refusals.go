package httpapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Refusals are logged and counted: a token guessed at thousands of
// requests a second, or a proxy that makes every client look local, must
// show in the journal and in /metrics. Logging is rate-limited per reason
// (a few lines a minute, then a count of those left out), so a flood costs
// the journal nothing.

// reason is why a request was refused (or, for reasonUntrustedProxy,
// noticed).
type reason int

const (
	reasonNotLocal       reason = iota // no token set, and not a local client
	reasonNoToken                      // a token is set, none was sent
	reasonWrongToken                   // a wrong bearer token or sign-in
	reasonThrottled                    // the address is locked out (throttle.go)
	reasonHost                         // Host not this server's (421)
	reasonOrigin                       // a web page of another origin (403)
	reasonMediaType                    // a body not declared JSON (415)
	reasonUntrustedProxy               // forwarded by a proxy not in trusted_proxies (not a refusal)
	reasonCount
)

var reasonNames = [reasonCount]string{"not_local", "no_token", "wrong_token", "throttled", "host", "origin",
	"media_type", "untrusted_proxy"}

// reasonLogs is how many lines each reason may log per window.
var reasonLogs = [reasonCount]struct {
	n      int
	window time.Duration
	level  slog.Level
	msg    string
}{
	reasonNotLocal:   {5, time.Minute, slog.LevelWarn, "refused a request from beyond this machine: no token is set, so only local programs are served"},
	reasonNoToken:    {5, time.Minute, slog.LevelInfo, "refused a request without a token"},
	reasonWrongToken: {5, time.Minute, slog.LevelWarn, "refused a wrong token"},
	reasonThrottled:  {5, time.Minute, slog.LevelWarn, "refused a token from an address locked out after too many wrong ones"},
	reasonHost:       {5, time.Minute, slog.LevelInfo, "refused a request for a host name this server does not answer to"},
	reasonOrigin:     {5, time.Minute, slog.LevelInfo, "refused a request from a web page of another origin"},
	reasonMediaType:  {5, time.Minute, slog.LevelInfo, "refused a body not declared JSON"},
	reasonUntrustedProxy: {1, time.Hour, slog.LevelInfo,
		"a request came through a proxy that server.trusted_proxies does not name: it is never judged local, and all its clients count as the proxy's address"},
}

// Kinds of routes whose wrong tokens are counted apart.
const (
	failAPI = iota
	failAdmin
	failOpenAI
	failSignin
	failCount
)

var failNames = [failCount]string{"api", "admin", "openai", "signin"}

// refusals counts and logs refusals. Safe for concurrent use.
type refusals struct {
	log      *slog.Logger
	refused  [reasonCount]atomic.Uint64
	failures [failCount]atomic.Uint64
	mu       sync.Mutex
	windows  [reasonCount]logWindow
}

// logWindow is one reason's log budget: used lines since start, and how
// many were left out.
type logWindow struct {
	start      time.Time
	used       int
	suppressed int
}

// note counts a refusal of r for why and logs it, rate-limited.
func (f *refusals) note(why reason, r *http.Request, c caller) {
	if why != reasonUntrustedProxy {
		f.refused[why].Add(1)
	}
	spec := reasonLogs[why]
	now := time.Now()
	f.mu.Lock()
	w := &f.windows[why]
	if now.Sub(w.start) >= spec.window || now.Before(w.start) {
		w.start, w.used = now, 0
	}
	if w.used >= spec.n {
		w.suppressed++
		f.mu.Unlock()
		return
	}
	w.used++
	skipped := w.suppressed
	w.suppressed = 0
	f.mu.Unlock()
	client := "unknown" // a trusted proxy forwarded something that is no address
	if c.addr.IsValid() {
		client = c.addr.String()
	}
	args := []any{"reason", reasonNames[why], "client", client, "method", clip(r.Method, 16), "path", clip(r.URL.Path, 256)}
	if c.forwarded != "" {
		args = append(args, "remote", r.RemoteAddr, "forwarded_header", c.forwarded)
	}
	if skipped > 0 {
		args = append(args, "not_logged_before", skipped)
	}
	f.log.Log(context.Background(), spec.level, spec.msg, args...)
}

// write writes the counters in the Prometheus text format, after the
// daemon's own metrics; throttled is how many addresses the throttle holds.
func (f *refusals) write(w io.Writer, throttled int) {
	fmt.Fprintf(w, "# HELP agnx_http_refused_total HTTP requests refused at the edge or for want of a token, by reason.\n# TYPE agnx_http_refused_total counter\n")
	for i := range reasonUntrustedProxy {
		fmt.Fprintf(w, "agnx_http_refused_total{reason=%q} %d\n", reasonNames[i], f.refused[i].Load())
	}
	fmt.Fprintf(w, "# HELP agnx_http_auth_failures_total Wrong tokens sent (bearer or web sign-in), by kind of route.\n# TYPE agnx_http_auth_failures_total counter\n")
	for i := range failCount {
		fmt.Fprintf(w, "agnx_http_auth_failures_total{route=%q} %d\n", failNames[i], f.failures[i].Load())
	}
	fmt.Fprintf(w, "# HELP agnx_http_auth_throttle_addresses Client addresses with recent wrong tokens that the throttle remembers.\n# TYPE agnx_http_auth_throttle_addresses gauge\nagnx_http_auth_throttle_addresses %d\n", throttled)
}
