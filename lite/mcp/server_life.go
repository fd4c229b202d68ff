package mcp

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnx-lite/agnx-lite/bwrap"
)

// server is the client of one (agent, server entry). Its mutex guards
// its state and is never held across I/O: a start, a call and a stop run
// without it.
type server struct {
	m         *Manager
	agent     string
	workspace string
	cfg       Server
	key       string // the tool list's cache key, a hash of the entry

	mu       sync.Mutex
	cur      *conn         // the running session, nil when stopped
	starting chan struct{} // closed when the start under way is over
	inUse    int           // calls holding cur
	idle     *time.Timer   // stops cur after the idle time; made once
	retired  bool          // replaced or forgotten: stop once unused
	closed   bool          // the manager closed: start nothing
	down     int           // consecutive deaths and failed starts
	retryAt  time.Time     // no start before
	list     *toolList
	relist   bool // a relist is under way (list_changed)
	again    bool // another list_changed came during it
	listed   bool // the list was had from the server itself (not only the cache)
	starts   uint64
	calls    uint64
	failures uint64
	lastErr  string
	started  time.Time
}

// conn is one session with a running server.
type conn struct {
	cs        *sdk.ClientSession
	proc      *bwrap.Process // stdio only
	resources bool           // the server offers resources
	stopping  atomic.Bool    // stopped on purpose: its end is no failure
	once      sync.Once
	closed    chan struct{}
	onStop    func()      // tests: told once stopped
	cancel    func()      // ends the session's context (HTTP streams)
	bigFrame  atomic.Bool // it sent a message past bigFrame
}

func newServer(m *Manager, agent, workspace string, cfg Server, key string) *server {
	return &server{m: m, agent: agent, workspace: workspace, cfg: cfg, key: key}
}

func (s *server) callTimeout() time.Duration {
	if s.cfg.CallTimeout > 0 {
		return s.cfg.CallTimeout
	}
	return s.m.o.CallTimeout
}

func (s *server) idleTimeout() time.Duration {
	if s.cfg.IdleTimeout > 0 {
		return s.cfg.IdleTimeout
	}
	return s.m.o.IdleTimeout
}

// backoff is how long a server that failed n times in a row is left
// alone.
func (s *server) backoff(n int) time.Duration {
	d := s.m.backoffBase
	for i := 1; i < n && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

// acquire returns the running session, starting the server when it is
// stopped, or fails at once with a sentence while a dead server is in
// its backoff. The caller calls release.
func (s *server) acquire(ctx context.Context) (*conn, error) {
	s.mu.Lock()
	for {
		switch {
		case s.closed:
			s.mu.Unlock()
			return nil, errClosed
		case s.cur != nil:
			c := s.cur
			s.inUse++
			if s.idle != nil {
				s.idle.Stop()
			}
			s.mu.Unlock()
			return c, nil
		case s.starting != nil:
			ch := s.starting
			s.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, fmt.Errorf("MCP server %s was still starting when the call was cancelled", quote(s.cfg.Name))
			}
			s.mu.Lock()
			continue
		}
		if wait := time.Until(s.retryAt); wait > 0 {
			err := fmt.Errorf("MCP server %s is down (%s): it is tried again in %s; check its entry and its log",
				quote(s.cfg.Name), s.lastErr, wait.Round(time.Second/10))
			s.mu.Unlock()
			return nil, err
		}
		ch := make(chan struct{})
		s.starting = ch
		s.mu.Unlock()
		c, err := s.connect()
		s.mu.Lock()
		if err == nil && s.closed {
			s.mu.Unlock()
			c.stop(false)
			s.mu.Lock()
		}
		s.starting = nil
		close(ch)
		switch {
		case s.closed:
		case err != nil:
			s.down++
			s.failures++
			s.retryAt = time.Now().Add(s.backoff(s.down))
			s.lastErr = err.Error()
			s.mu.Unlock()
			s.m.o.Log.Warn("an MCP server could not start", "agent", s.agent, "server", s.cfg.Name, "err", err)
			return nil, err
		default:
			s.cur = c
			s.starts++
			s.started = time.Now()
			go s.watch(c)
			if !s.listed {
				// The list came from the cache: check it once against the
				// server itself (it may have been upgraded in between).
				s.listed = true
				go s.listChanged(c)
			}
		}
	}
}

// release ends a call on c: the last one arms the idle timer, or stops
// a retired server.
func (s *server) release(c *conn, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inUse--
	if ok && s.cur == c {
		s.down = 0
	}
	if s.inUse > 0 || s.cur == nil {
		return
	}
	if s.retired || c.bigFrame.Load() && s.cur == c {
		// A session that read a huge message is ended rather than kept
		// idle with the buffer it grew; the next call starts it afresh.
		s.detachLocked(false)
		return
	}
	if s.idle == nil {
		s.idle = time.AfterFunc(s.idleTimeout(), s.idleStop)
	} else {
		s.idle.Reset(s.idleTimeout())
	}
}

// idleStop stops a server no call used for its idle time.
func (s *server) idleStop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inUse == 0 && s.cur != nil {
		s.detachLocked(false)
	}
}

// detachLocked stops the running session on a goroutine of its own
// (never under the lock). s.mu is held.
func (s *server) detachLocked(kill bool) {
	c := s.cur
	s.cur = nil
	c.stopping.Store(true)
	go c.stop(kill)
}

// retire marks a server replaced or forgotten: it stops now if unused,
// else when its last call ends.
func (s *server) retire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retired = true
	if s.idle != nil {
		s.idle.Stop()
	}
	if s.inUse == 0 && s.cur != nil {
		s.detachLocked(false)
	}
}

// shutdown stops the server for good and waits for it.
func (s *server) shutdown() {
	s.mu.Lock()
	s.closed, s.retired = true, true
	if s.idle != nil {
		s.idle.Stop()
	}
	for s.starting != nil {
		ch := s.starting
		s.mu.Unlock()
		<-ch
		s.mu.Lock()
	}
	c := s.cur
	s.cur = nil
	s.mu.Unlock()
	if c != nil {
		c.stopping.Store(true)
		c.stop(false)
	}
}

// watch waits for the session's end; an end nobody asked for is a death.
func (s *server) watch(c *conn) {
	err := c.cs.Wait()
	if c.stopping.Load() {
		return
	}
	why := "its session ended"
	if err != nil {
		why += " (" + err.Error() + ")"
	}
	s.died(c, errors.New(why))
}

// died records that c's server died, arms the backoff, reaps it, and
// returns the reason it recorded. That reason is whole: a stdio
// server's process is reaped first (see reap), so how it ended and all
// it wrote to stderr are in the sentence, whichever of the session's
// end and the failed call noticed the death first.
func (s *server) died(c *conn, why error) string {
	reason := why.Error() + c.reap()
	s.mu.Lock()
	if s.cur == c {
		s.cur = nil
		s.down++
		s.failures++
		s.retryAt = time.Now().Add(s.backoff(s.down))
		s.lastErr = reason
	}
	s.mu.Unlock()
	if c.stopping.CompareAndSwap(false, true) {
		s.m.o.Log.Warn("an MCP server died", "agent", s.agent, "server", s.cfg.Name, "err", reason)
		go c.stop(true)
	}
	return reason
}

// exitGrace is how long a stdio server whose session broke is given to
// exit by itself before it is killed: a crashing server closes its
// output a moment before the kernel reaps it. It only decides whether
// the sentence says the server's own exit status or that it was killed;
// what it wrote to stderr is whole either way.
const exitGrace = time.Second

// reap ends c's process, when it has one, and returns how it ended and
// the end of its stderr, as the tail of a sentence. The process is
// waited for until it is reaped: only then has all it wrote to stderr
// been read (its pipe reaches EOF when the process and its sandbox are
// gone), so a reason taken earlier could miss the line that says why.
func (c *conn) reap() string {
	if c.proc == nil {
		return ""
	}
	if !waitFor(c.proc.Done(), exitGrace) {
		c.proc.Kill() // the whole sandbox, or trust mode's process group
		if !waitFor(c.proc.Done(), reapLimit) {
			return ": it did not end when killed" + c.stderr()
		}
	}
	return ": " + exitText(c.proc.Wait()) + c.stderr()
}

// reapLimit bounds the wait for a killed server to be reaped. SIGKILL
// ends the sandbox at once; only a kernel stuck on the process (a hung
// mount, say) reaches it, and then the daemon goes on without the rest
// of the stderr.
const reapLimit = 30 * time.Second

// exitText says how a process ended, from its Wait error.
func exitText(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "it exited with status 0"
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "it was killed by " + ws.Signal().String()
		}
		return "it exited with status " + strconv.Itoa(ee.ExitCode())
	}
	return "it ended (" + err.Error() + ")"
}

// hung records a call that outlived the call timeout and kills the
// server: later calls start it again rather than queue behind it.
func (s *server) hung(c *conn, what string) error {
	err := fmt.Errorf("MCP server %s did not answer %s within %s: it was stopped, and starts again on the next call",
		quote(s.cfg.Name), what, s.callTimeout())
	s.mu.Lock()
	s.failures++
	s.lastErr = err.Error()
	if s.cur == c {
		s.detachLocked(true)
	}
	s.mu.Unlock()
	c.stopping.Store(true)
	go c.stop(true)
	return err
}

// call runs fn with the running session, starting the server when
// needed, bounded by the call timeout. A call the server does not answer
// in time fails and stops the server; one it dies during fails with the
// reason. fn runs on a goroutine of its own, so a server that stops
// reading its input cannot hold the caller either.
func (s *server) call(ctx context.Context, what string, fn func(context.Context, *conn) error) error {
	c, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn(cctx, c) }()
	select {
	case err = <-done:
	case <-cctx.Done():
		grace := time.NewTimer(200 * time.Millisecond) // an answer racing the deadline
		select {
		case err = <-done:
		case <-grace.C:
			err = cctx.Err()
		}
		grace.Stop()
	}
	switch {
	case err == nil:
		s.release(c, true)
		return nil
	case errors.Is(ctx.Err(), context.Canceled):
		s.release(c, true)
		return fmt.Errorf("the call to MCP server %s was cancelled", quote(s.cfg.Name))
	case cctx.Err() != nil:
		err = s.hung(c, what)
		s.release(c, false)
		return err
	case serverError(err):
		s.release(c, true)
		return fmt.Errorf("MCP server %s refused %s: %v", quote(s.cfg.Name), what, err)
	}
	reason := s.died(c, err)
	s.release(c, false)
	return fmt.Errorf("MCP server %s failed during %s (%s): it is started again on a later call",
		quote(s.cfg.Name), what, reason)
}

// stop ends the session: the server's input is closed (the polite way),
// then SIGTERM after 2 s, then SIGKILL; kill goes straight to SIGKILL.
func (c *conn) stop(kill bool) {
	c.once.Do(func() {
		if c.proc != nil && kill {
			c.proc.Kill()
		}
		closed := make(chan struct{})
		go func() { _ = c.cs.Close(); close(closed) }()
		if c.proc != nil {
			_ = c.proc.Stdin.Close() // in case Close waits on something
			if !waitFor(c.proc.Done(), 2*time.Second) {
				c.proc.Signal(syscall.SIGTERM)
				if !waitFor(c.proc.Done(), time.Second) {
					c.proc.Kill()
				}
			}
			_ = c.proc.Wait()
			_ = c.proc.Stdout.Close()
		}
		waitFor(closed, 2*time.Second)
		c.cancel()
		close(c.closed)
		if c.onStop != nil {
			c.onStop()
		}
	})
}

func waitFor(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// stderr is the end of what a stdio server wrote to stderr, as the tail
// of a sentence.
func (c *conn) stderr() string {
	if c.proc == nil {
		return ""
	}
	msg := strings.TrimSpace(strings.ToValidUTF8(string(c.proc.Stderr()), "?"))
	if msg == "" {
		return ""
	}
	if i := strings.LastIndexByte(msg[:max(0, len(msg)-1)], '\n'); i >= 0 && len(msg)-i > 300 {
		msg = msg[i+1:]
	}
	if len(msg) > 300 {
		msg = "…" + strings.ToValidUTF8(msg[len(msg)-300:], "")
	}
	return "; its stderr ends: " + strings.ReplaceAll(msg, "\n", " | ")
}

// serverError tells an error the server answered (the session is fine)
// from one of the connection.
func serverError(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je)
}

func (s *server) stat() Stat {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stat{Agent: s.agent, Server: s.cfg.Name, Running: s.cur != nil, Calls: s.calls, Failures: s.failures,
		LastError: s.lastErr, StartedAt: s.started}
	if s.starts > 1 {
		st.Restarts = s.starts - 1
	}
	if s.list != nil {
		st.Tools = len(s.list.Tools)
	}
	if s.cur != nil && s.cur.proc != nil {
		st.PID = s.cur.proc.Pid
	}
	if s.cur == nil {
		st.StartedAt = time.Time{}
	}
	return st
}
