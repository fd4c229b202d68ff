package e2e

import (
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// dropProxy stands between the browser and the daemon so that a test can
// cut the browser's connections, as a phone losing Wi-Fi does: POST
// /drop on its control server closes every connection and refuses new ones
// until POST /restore.
type dropProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	refused bool
}

func startProxy(t *testing.T, target string) *dropProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &dropProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() {
		_ = ln.Close()
		p.drop(false)
	})
	go p.serve()
	return p
}

func (p *dropProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *dropProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

func (p *dropProxy) pipe(c net.Conn) {
	p.mu.Lock()
	if p.refused {
		p.mu.Unlock()
		_ = c.Close()
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		p.mu.Unlock()
		_ = c.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(up, c)
	go cp(c, up)
	<-done
	_, _ = c.Close(), up.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// drop closes every connection; refuse keeps new ones out.
func (p *dropProxy) drop(refuse bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refused = refuse
	for c := range p.conns {
		_ = c.Close()
	}
}

// control serves POST /drop, POST /restore and POST /release (opens the
// fake model's gate) for the browser script.
func (p *dropProxy) control(t *testing.T, release func()) string {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /drop", func(w http.ResponseWriter, _ *http.Request) { p.drop(true) })
	mux.HandleFunc("POST /restore", func(w http.ResponseWriter, _ *http.Request) { p.drop(false) })
	mux.HandleFunc("POST /release", func(w http.ResponseWriter, _ *http.Request) { release() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}
