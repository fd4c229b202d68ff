package httpapi

import (
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeConn is a connection from addr; nothing is read or written.
type fakeConn struct {
	net.Conn
	addr net.Addr
}

func (c fakeConn) RemoteAddr() net.Addr { return c.addr }
func (c fakeConn) Close() error         { return nil }

// One remote client may hold half the event streams, no more; loopback
// clients (this box's own programs) may hold them all.
func TestConnTracker_StreamShare(t *testing.T) {
	lim := ConnLimits{Streams: 4}
	srv := &http.Server{}
	ln := lim.Limit(srv, nil).(*limitedListener)
	tr := ln.t
	conn := func(ip string) *trackedConn {
		tc, victims, why := tr.admit(fakeConn{addr: &net.TCPAddr{IP: net.ParseIP(ip), Port: 1}})
		require.NotNil(t, tc, why)
		require.Empty(t, victims)
		return tc
	}
	remote := "192.0.2.7"
	assert.Empty(t, tr.toStream(conn(remote)))
	assert.Empty(t, tr.toStream(conn(remote)))
	why := tr.toStream(conn(remote))
	assert.Contains(t, why, "the most one client may", "a third stream from one remote address")
	assert.Empty(t, tr.toStream(conn("192.0.2.8")), "another client still gets one")

	last := conn(remote)
	assert.Contains(t, tr.toStream(last), "the most one client may")
	tr.connState(firstStream(tr, remote), http.StateClosed)
	assert.Empty(t, tr.toStream(last), "a closed stream gives its place back")

	assert.Empty(t, tr.toStream(conn("127.0.0.1")), "loopback has no share: the fourth")
	assert.Contains(t, tr.toStream(conn("127.0.0.1")), "server.max_streams", "all four are taken")
}

// firstStream is one stream connection of ip.
func firstStream(tr *connTracker, ip string) *trackedConn {
	for c := range tr.conns {
		if c.stream && c.addr.String() == ip {
			return c
		}
	}
	return nil
}
