package llm

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultConnectTimeout bounds dialing a provider.
const DefaultConnectTimeout = 10 * time.Second

// NewTransport returns a transport with a dial timeout and a TLS handshake
// timeout but no response-header timeout: the first-token watchdog of
// [Client.Do] covers waiting for a slow model, and a stream may legitimately
// last many minutes. connect <= 0 means DefaultConnectTimeout.
func NewTransport(connect time.Duration) *http.Transport {
	if connect <= 0 {
		connect = DefaultConnectTimeout
	}
	d := &net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialCopyConn(d),
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   connect,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// NewHTTPClient returns an http.Client over [NewTransport] with no overall
// Timeout, which would cut long streams short.
func NewHTTPClient(connect time.Duration) *http.Client {
	return &http.Client{Transport: NewTransport(connect)}
}

// dialCopyConn dials with d and gives each connection a ReadFrom that
// copies through a recycled buffer. net/http writes every request body of
// known length as an io.LimitedReader into the connection's ReadFrom, and a
// TCP connection's copies through a buffer it allocates per call, the
// body's size up to 32 KiB: for a model call, which sends the whole
// window, that was one turn's largest allocation. TLS connections are
// built over this one but never call its ReadFrom; HTTP/2 streams bodies
// through buffers of its own.
func dialCopyConn(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return copyConn{c}, nil
	}
}

type copyConn struct{ net.Conn }

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// ReadFrom copies r to the connection through a pooled buffer; the
// wrapper hides the connection's own ReadFrom from io.CopyBuffer.
func (c copyConn) ReadFrom(r io.Reader) (int64, error) {
	b := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(b)
	return io.CopyBuffer(struct{ io.Writer }{c.Conn}, r, *b)
}
