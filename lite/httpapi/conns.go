package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// ConnLimits bound the connections an http.Server holds, so that no client
// can lock the others out by opening connections and leaving them idle
// (64 keep-alive connections on /livez, which needs no token, once held a
// 64-connection server for its whole idle timeout). Zero fields mean no
// limit.
//
// A new connection past a limit first makes room by closing the
// connection that has waited longest without a request in progress: an
// idle keep-alive connection, or one that has sent nothing for
// newConnGrace. Only when every connection is busy is it refused, with a
// 503 saying why. Event streams live for hours, so a connection that
// starts one leaves the request count for the stream count.
type ConnLimits struct {
	// Max caps the connections serving, or idle between, ordinary
	// requests (server.max_connections).
	Max int
	// PerClient caps those of one client address
	// (server.max_connections_per_client).
	PerClient int
	// Streams caps the connections serving event streams
	// (server.max_streams); one client address other than loopback may
	// hold half of them at most, so no remote client takes them all
	// (local programs are one user's, and trusted).
	Streams int
	// Now is the clock that times silent connections; nil means
	// time.Now. Tests set it.
	Now func() time.Time
}

// newConnGrace is how long a new connection may stay silent before it
// counts as idle: a client sends its request at once, a browser's
// speculative connection or an attacker's may never.
const newConnGrace = time.Second

// Limit applies l to srv serving ln: it sets srv.ConnState and
// srv.ConnContext and returns the listener to serve.
func (l ConnLimits) Limit(srv *http.Server, ln net.Listener) net.Listener {
	t := &connTracker{lim: l, conns: map[*trackedConn]struct{}{}, perAddr: map[netip.Addr]int{},
		streamsPerAddr: map[netip.Addr]int{}, now: l.Now}
	if t.now == nil {
		t.now = time.Now
	}
	srv.ConnState = t.connState
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if tc, ok := c.(*trackedConn); ok {
			return context.WithValue(ctx, connKey{}, tc)
		}
		return ctx
	}
	return &limitedListener{Listener: ln, t: t, lingering: make(chan struct{}, maxLingering)}
}

type connKey struct{}

// connTracker counts connections by kind and client, and knows which may
// be closed to make room. mu guards everything below it.
type connTracker struct {
	lim               ConnLimits
	now               func() time.Time
	mu                sync.Mutex
	conns             map[*trackedConn]struct{}
	perAddr           map[netip.Addr]int // request connections by client
	streamsPerAddr    map[netip.Addr]int // stream connections by client
	requests, streams int
}

// trackedConn is a connection the tracker counts; its fields below the
// embedded Conn are guarded by the tracker's mu.
type trackedConn struct {
	net.Conn
	t      *connTracker
	addr   netip.Addr
	state  http.ConnState
	since  time.Time
	stream bool
	gone   bool
}

// Close releases the connection's place; the server and an eviction may
// both call it.
func (c *trackedConn) Close() error {
	c.t.mu.Lock()
	c.t.forget(c)
	c.t.mu.Unlock()
	return c.Conn.Close()
}

type limitedListener struct {
	net.Listener
	t         *connTracker
	lingering chan struct{} // refused connections being drained
}

// refuseLinger bounds the answer to a refused connection, and maxLingering
// how many are drained at once.
const (
	refuseLinger = time.Second
	maxLingering = 16
)

func (l *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc, victims, why := l.t.admit(c)
		for _, v := range victims {
			_ = v.Conn.Close()
		}
		if tc != nil {
			return tc, nil
		}
		l.refuse(c, why)
	}
}

// admit counts c in, after choosing the connections to close to make room
// (the caller closes them, outside the lock); or, when every connection
// is busy, returns the reason to refuse it.
func (t *connTracker) admit(c net.Conn) (tc *trackedConn, victims []*trackedConn, refusal string) {
	addr := remoteAddr(c)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lim.PerClient > 0 && t.perAddr[addr] >= t.lim.PerClient {
		v := t.idlest(addr, true)
		if v == nil {
			return nil, nil, "too many open connections from your address (server.max_connections_per_client): close some or try again shortly"
		}
		t.forget(v)
		victims = append(victims, v)
	}
	if t.lim.Max > 0 && t.requests >= t.lim.Max {
		v := t.idlest(netip.Addr{}, false)
		if v == nil {
			return nil, victims, "too many open connections (server.max_connections): try again shortly"
		}
		t.forget(v)
		victims = append(victims, v)
	}
	tc = &trackedConn{Conn: c, t: t, addr: addr, state: http.StateNew, since: t.now()}
	t.conns[tc] = struct{}{}
	t.requests++
	t.perAddr[addr]++
	return tc, victims, ""
}

// idlest returns the request connection (of addr, when sameAddr) that has
// waited longest with no request in progress, or nil.
func (t *connTracker) idlest(addr netip.Addr, sameAddr bool) *trackedConn {
	var best *trackedConn
	now := t.now()
	for c := range t.conns {
		if c.stream || (sameAddr && c.addr != addr) {
			continue
		}
		if c.state != http.StateIdle && (c.state != http.StateNew || now.Sub(c.since) < newConnGrace) {
			continue
		}
		if best == nil || c.since.Before(best.since) {
			best = c
		}
	}
	return best
}

// forget releases c's place, once.
func (t *connTracker) forget(c *trackedConn) {
	if c.gone {
		return
	}
	c.gone = true
	delete(t.conns, c)
	if c.stream {
		t.streams--
		decr(t.streamsPerAddr, c.addr)
		return
	}
	t.requests--
	decr(t.perAddr, c.addr)
}

func decr(m map[netip.Addr]int, a netip.Addr) {
	if m[a]--; m[a] <= 0 {
		delete(m, a)
	}
}

func (t *connTracker) connState(c net.Conn, st http.ConnState) {
	tc, ok := c.(*trackedConn)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch st {
	case http.StateClosed, http.StateHijacked:
		t.forget(tc)
	default:
		tc.state, tc.since = st, t.now()
	}
}

// toStream moves c from the request count to the stream count, or
// returns why not: the streams, or this client's share, are at their
// limit.
func (t *connTracker) toStream(c *trackedConn) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.gone || c.stream {
		return ""
	}
	if t.lim.Streams > 0 && t.streams >= t.lim.Streams {
		return "too many open event streams (server.max_streams): close one or try again shortly"
	}
	if share := max(t.lim.Streams/2, 1); t.lim.Streams > 0 && !c.addr.IsLoopback() && t.streamsPerAddr[c.addr] >= share {
		return fmt.Sprintf("your address holds %d of the %d event streams (server.max_streams), the most one client may: close one first", share, t.lim.Streams)
	}
	t.requests--
	decr(t.perAddr, c.addr)
	c.stream = true
	t.streams++
	t.streamsPerAddr[c.addr]++
	return ""
}

// streamSlot takes a stream place for the connection r came on, and marks
// the response to close that connection when the stream ends (it never
// goes back to the request count). On refusal it has answered 503. A
// connection no tracker counts (tests, other servers) always gets one.
func streamSlot(w http.ResponseWriter, r *http.Request) bool {
	tc, ok := r.Context().Value(connKey{}).(*trackedConn)
	if !ok {
		return true
	}
	if why := tc.t.toStream(tc); why != "" {
		w.Header().Set("Retry-After", "5")
		writeProblem(w, r, http.StatusServiceUnavailable, codeUnavailable, why)
		return false
	}
	w.Header().Set("Connection", "close")
	return true
}

func remoteAddr(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// refuse answers a connection past the limits with a 503 and closes it,
// so a full server says why instead of hanging its clients. It is the
// whole HTTP exchange: the request is not parsed.
func (l *limitedListener) refuse(c net.Conn, why string) {
	body, _ := json.Marshal(problem{Type: litePrefix + codeUnavailable,
		Title: titles[codeUnavailable], Status: http.StatusServiceUnavailable, Detail: why, Code: codeUnavailable})
	_ = c.SetDeadline(time.Now().Add(refuseLinger))
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\n"+
		"Content-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s", len(body), body)
	// Closing with the request unread would reset the connection, and the
	// client could lose the answer: half-close, drain briefly, then close.
	// A few refusals drain at a time; past that they are closed at once.
	tcp, ok := c.(*net.TCPConn)
	select {
	case l.lingering <- struct{}{}:
	default:
		ok = false
	}
	if !ok {
		_ = c.Close()
		return
	}
	go func() {
		defer func() { <-l.lingering }()
		_ = tcp.CloseWrite()
		_, _ = io.Copy(io.Discard, io.LimitReader(tcp, 64<<10))
		_ = tcp.Close()
	}()
}
