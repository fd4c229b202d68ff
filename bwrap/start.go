package bwrap

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// Process is a long-lived sandboxed command started by Runner.Start: an
// MCP server talking on its stdin and stdout. It has the namespaces,
// limits, owner lifeline and network of Run's sandboxes, but no deadline.
type Process struct {
	// Stdin is the command's standard input; closing it is the polite way
	// to ask a stdio server to end.
	Stdin io.WriteCloser
	// Stdout is the command's standard output.
	Stdout io.ReadCloser
	// Pid is the host pid of the process Start started (bwrap, or in trust
	// mode the command itself): the root of the sandbox's process tree.
	Pid int

	stderr *tail
	trust  bool          // started without bwrap (see Interrupt)
	done   chan struct{} // closed once the process is reaped
	err    error         // set before done is closed
}

// maxStderrTail is how much of a process's last stderr is kept, for the
// sentence that says why it ended.
const maxStderrTail = 4 << 10

// startSetup bounds bwrap's set-up (and the network helper's) when the
// caller's context has no deadline.
const startSetup = 30 * time.Second

// Start starts command under p and returns at once, with its standard
// input and output as pipes. Limits.Timeout is not applied: the process
// runs until it exits or Kill ends it. ctx bounds the start alone.
func (r *Runner) Start(ctx context.Context, p Policy, command []string) (*Process, error) {
	bin, initPath, err := r.paths()
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startSetup)
		defer cancel()
	}
	lim := p.Limits.withDefaults()
	var n *netns
	if p.Network && !r.Trust {
		if n, err = newNetns(r.NetworkHelper); err != nil {
			return nil, err
		}
	}
	cmd, err := r.command(p, lim, bin, initPath, command, n)
	if err != nil {
		closeNet(n)
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		closeNet(n)
		return nil, fmt.Errorf("start sandbox: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeFiles([]*os.File{inR, inW})
		closeNet(n)
		return nil, fmt.Errorf("start sandbox: %w", err)
	}
	proc := &Process{Stdin: inW, Stdout: outR, stderr: &tail{max: maxStderrTail}, done: make(chan struct{}),
		trust: r.Trust}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, proc.stderr
	err = startWith(ctx, cmd, n)
	closeFiles([]*os.File{inR, outW}) // the child's ends
	if err != nil {
		closeFiles([]*os.File{inW, outR})
		closeNet(n)
		return nil, fmt.Errorf("%w: start %s: %v%s", ErrUnavailable, command[0], err, saidTail(proc.stderr))
	}
	proc.Pid = cmd.Process.Pid
	go func() {
		proc.err = cmd.Wait()
		closeNet(n) // the helper ends with the sandbox
		close(proc.done)
	}()
	return proc, nil
}

func closeNet(n *netns) {
	if n != nil {
		n.close()
	}
}

// Wait waits for the process to end and returns how it ended.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Done is closed once the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Kill ends the process and everything in its sandbox at once.
func (p *Process) Kill() { p.Signal(syscall.SIGKILL) }

// Signal sends sig to the process's group: bwrap and, in trust mode, the
// command and its children. (A sandbox's own processes end with bwrap.)
func (p *Process) Signal(sig syscall.Signal) {
	select {
	case <-p.done:
		return // reaped: its pid may be another's by now
	default:
	}
	_ = syscall.Kill(-p.Pid, sig)
}

// Stderr returns the last bytes the process wrote to its stderr (at most
// 4 KiB), for the sentence that says why it failed.
func (p *Process) Stderr() []byte { return p.stderr.bytes() }

// saidTail is the first line of what bwrap wrote before it gave up.
func saidTail(t *tail) string {
	c := &capped{max: maxStderrTail}
	c.buf.Write(t.bytes())
	return said(c)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

func (t *tail) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}
