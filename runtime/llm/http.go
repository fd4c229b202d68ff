package llm

import (
	"net"
	"net/http"
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
		DialContext:           d.DialContext,
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
