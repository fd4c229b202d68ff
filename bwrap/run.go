package bwrap

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Result is what a sandboxed command did.
type Result struct {
	// Output is stdout and stderr as they interleaved, cut at MaxOutput;
	// only stdout with Policy.SplitStderr.
	Output []byte
	// Stderr is stderr, cut at MaxOutput, with Policy.SplitStderr.
	Stderr []byte
	// Cut is how many bytes of output were dropped.
	Cut      int64
	ExitCode int
	// TimedOut is true when the deadline killed it.
	TimedOut bool
	Duration time.Duration
}

// Runner runs commands in bubblewrap.
type Runner struct {
	// Bwrap is the bwrap executable; empty means "bwrap" on PATH.
	Bwrap string
	// Init is this binary, bound into the sandbox to set the limits; empty
	// means os.Executable().
	Init string
	// Trust runs commands without bubblewrap (sandbox.mode: trust): same
	// deadline, output cap, limits and cleared environment, in the
	// workspace, but no isolation at all.
	Trust bool
	// NetworkHelper connects the network of a sandbox granted one:
	// Slirp4netns, Pasta, or "" (auto) for slirp4netns where installed,
	// else pasta (see lookNet).
	NetworkHelper string
	// Owner, when set, marks every sandbox as this daemon instance's and
	// gives it the owner's lifeline, so that a sandbox the daemon's death
	// left behind ends itself or is ended by the next start (see Owner).
	Owner *Owner

	orphanable bool
}

// ErrUnavailable is returned when bwrap cannot run here; the error's text
// says how to fix it.
var ErrUnavailable = errors.New("the bubblewrap sandbox is not available")

// ErrTrustReadOnly is returned in trust mode for a policy whose workspace
// is read-only: without the sandbox nothing keeps the command from
// writing there.
var ErrTrustReadOnly = errors.New("sandbox.mode is trust, which cannot keep a command from writing to a read-only workspace: use the file tools (read_file, list_dir, glob, grep) instead, or set sandbox.mode: bwrap")

// Run runs command under p with stdin as its input. It returns an error
// only when the sandbox itself could not run; what the command did, a
// non-zero exit or a timeout included, is in the Result.
func (r *Runner) Run(ctx context.Context, p Policy, command []string, stdin []byte) (Result, error) {
	bin, initPath, err := r.paths()
	if err != nil {
		return Result{}, err
	}
	lim := p.Limits.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	var n *netns
	if p.Network && !r.Trust {
		if n, err = newNetns(r.NetworkHelper); err != nil {
			return Result{}, err
		}
		defer n.close() // the helper ends with the sandbox
	}
	cmd, err := r.command(p, lim, bin, initPath, command, n)
	if err != nil {
		return Result{}, err
	}
	cmd.Stdin = bytes.NewReader(stdin)
	out := &capped{max: lim.MaxOutput}
	errOut := out
	if p.SplitStderr {
		errOut = &capped{max: lim.MaxOutput}
	}
	cmd.Stdout, cmd.Stderr = out, errOut
	start := time.Now()
	if err := startWith(ctx, cmd, n); err != nil {
		return Result{}, fmt.Errorf("%w: start %s: %v%s", ErrUnavailable, bin, err, said(errOut))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	timedOut := false
	select {
	case werr = <-done:
	case <-ctx.Done():
		timedOut = ctx.Err() == context.DeadlineExceeded
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		werr = <-done
	}
	res := Result{Output: out.buf.Bytes(), Cut: out.cut, TimedOut: timedOut, Duration: time.Since(start)}
	if errOut != out {
		res.Stderr, res.Cut = errOut.buf.Bytes(), res.Cut+errOut.cut
	}
	var exit *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &exit):
		res.ExitCode = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode = 128 + int(ws.Signal())
		}
	default:
		return res, fmt.Errorf("run sandbox: %w", werr)
	}
	if ctx.Err() == context.Canceled && !timedOut {
		return res, context.Canceled
	}
	return res, nil
}

// command is the process to start: bwrap (marked with its owner, given
// the lifeline) or, in trust mode, the init alone. It gets its own process
// group, so the deadline kills bwrap and, with it, the sandbox's pid
// namespace and everything in it.
func (r *Runner) command(p Policy, lim Limits, bin, initPath string, command []string, n *netns) (*exec.Cmd, error) {
	if r.Trust {
		if p.WorkspaceReadOnly {
			return nil, ErrTrustReadOnly
		}
		return r.finish(trusted(p, lim, initPath, command)), nil
	}
	var opts []string
	var files []*os.File
	if r.Owner != nil {
		if err := r.Owner.start(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		p.lifeline = true
		opts = []string{"--unsetenv", r.Owner.marker()}
		files = []*os.File{r.Owner.read} // fd 3: lifelineFD
	}
	if n != nil {
		var more []string
		more, files = n.wire(&p, files)
		opts = append(opts, more...)
	}
	cmd := exec.Command(bin, append(opts, Args(p, initPath, command)...)...)
	cmd.ExtraFiles = files
	return r.finish(cmd), nil
}

// finish gives cmd its environment and process group.
func (r *Runner) finish(cmd *exec.Cmd) *exec.Cmd {
	if cmd.Env == nil {
		cmd.Env = hostEnv
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if r.Owner != nil && !r.Trust {
		// With the lifeline, bwrap arms its own parent-death signal once
		// its sandbox exists (see Owner): killed before that, it would
		// leave the sandbox waiting for it forever.
		cmd.SysProcAttr.Pdeathsig = 0
	}
	if r.orphanable { // tests: what a daemon killed mid-set-up leaves
		cmd.Args = slices.DeleteFunc(cmd.Args, func(a string) bool { return a == "--die-with-parent" })
	}
	return cmd
}

// startWith starts cmd and, with n, connects its network before the
// command runs; a sandbox whose network cannot be had is ended.
func startWith(ctx context.Context, cmd *exec.Cmd, n *netns) error {
	if err := cmd.Start(); err != nil || n == nil {
		return err
	}
	deadline, _ := ctx.Deadline()
	if err := n.attach(deadline); err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return err
	}
	return nil
}

// said is the first line of what bwrap wrote before it was ended, for an
// error that says why its sandbox could not be had.
func said(out *capped) string {
	line, _, _ := strings.Cut(strings.TrimSpace(out.buf.String()), "\n")
	if line == "" {
		return ""
	}
	return " (bwrap: " + line + ")"
}

func (r *Runner) paths() (bin, initPath string, err error) {
	if r.Trust {
		initPath, err = os.Executable()
		return "", initPath, err
	}
	bin = r.Bwrap
	if bin == "" {
		bin = "bwrap"
	}
	if bin, err = exec.LookPath(bin); err != nil {
		return "", "", fmt.Errorf("%w: bwrap is not installed: install it with \"sudo apt-get install bubblewrap\"", ErrUnavailable)
	}
	initPath = r.Init
	if initPath == "" {
		if initPath, err = os.Executable(); err != nil {
			return "", "", fmt.Errorf("%w: cannot find this program's path: %v", ErrUnavailable, err)
		}
	}
	return bin, initPath, nil
}

// trusted is the command line of trust mode: this binary as init (for
// the limits), then the command, in the workspace.
func trusted(p Policy, lim Limits, initPath string, command []string) *exec.Cmd {
	p.RunAs = nil // trust mode runs with the daemon's rights
	cmd := exec.Command(initPath, append(initArgs(lim, p), command...)...)
	cmd.Dir = p.Workspace
	if p.Chdir != "" {
		cmd.Dir = p.Chdir
		wd := cmp.Or(p.WorkDir, "/workspace")
		if rel, ok := strings.CutPrefix(p.Chdir, wd); ok && (rel == "" || rel[0] == '/') {
			cmd.Dir = p.Workspace + rel // the workspace's path inside, on the host
		}
	}
	for _, kv := range env(p.Env, p.Workspace) {
		cmd.Env = append(cmd.Env, kv[0]+"="+kv[1])
	}
	return cmd
}

// capped keeps the first max bytes written and counts the rest, never
// blocking the writer (a command flooding its output is drained, not
// stalled).
type capped struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
	cut int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if room >= len(p) {
		return c.buf.Write(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.cut += int64(len(p) - max(room, 0))
	return len(p), nil
}

var _ io.Writer = (*capped)(nil)
