package bgproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// Defaults of Options.
const (
	DefaultPerAgent = 8
	DefaultTotal    = 16
	DefaultGrace    = 5 * time.Second
	// keepEnded is how long the registry keeps an ended process (and its
	// log) before the next spawn prunes it.
	keepEnded = 7 * 24 * time.Hour
	// commitTimeout bounds a registry write made outside a tool call.
	commitTimeout = 10 * time.Second
)

// Options configure a Manager; zero values are the defaults.
type Options struct {
	// Store holds the registry: the runtime's Loop. Required.
	Store Store
	// Notify tells an agent's session that a process it watches ended or
	// printed the watched pattern (the wiring hands it to the notification
	// path); nil drops those notices. It is called from the process's own
	// goroutine and must not block for long.
	Notify func(agent, sessionID, text string)
	// OnExit is told that a process ended (the scheduler cancels what was
	// linked to it); nil: nobody. Same goroutine rule as Notify.
	OnExit func(handle string)
	Logger *slog.Logger
	// MaxLogBytes caps each log file; default DefaultMaxLog.
	MaxLogBytes int64
	// Grace is how long a process asked to end (SIGTERM) has before it is
	// killed; default DefaultGrace.
	Grace time.Duration
	// PerAgent and Total bound the processes running at once, per agent
	// and in all; defaults DefaultPerAgent and DefaultTotal.
	PerAgent, Total int
}

// Manager runs the background processes of every agent. It holds nothing
// and runs nothing until the first spawn; each running process has one
// goroutine (copying its output) and timers, none once it ended.
type Manager struct {
	o Options

	mu      sync.Mutex
	running map[string]*proc // by handle
	closed  bool
	wg      sync.WaitGroup

	// timeouts, set by tests, is handed each process's timeout instead of
	// a timer: the test ends the process when it has seen what it waits
	// for, not when a second of wall time has passed.
	timeouts func(handle string, end func())
}

// New returns a Manager over o.
func New(o Options) *Manager {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxLogBytes <= 0 {
		o.MaxLogBytes = DefaultMaxLog
	}
	o.MaxLogBytes = max(o.MaxLogBytes, minMaxLog)
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.PerAgent <= 0 {
		o.PerAgent = DefaultPerAgent
	}
	if o.Total <= 0 {
		o.Total = DefaultTotal
	}
	return &Manager{o: o}
}

// proc is one running process.
type proc struct {
	bp *bwrap.Process

	// Guarded by Manager.mu.
	rec       Record
	end       Status         // Killed or TimedOut once asked to end; "" while it runs on
	notifyEnd bool           // tell the session when it ends
	pattern   *regexp.Regexp // tell the session once when a line matches
	timers    []*time.Timer

	stdinMu sync.Mutex
	stdin   io.WriteCloser // nil once closed

	done  chan struct{} // closed once final is set and stored
	final Record
}

// Start starts a command in one agent's sandbox: bwrap.Runner.Start
// behind the agent's policy, starting in dir (a path inside the sandbox).
type Start func(ctx context.Context, dir string, command []string) (*bwrap.Process, error)

// spawnReq is a checked spawn.
type spawnReq struct {
	agent, session, workspace string
	command, label, workdir   string
	dir                       string // workdir inside the sandbox
	timeout                   time.Duration
	interactive, wait         bool
}

// ErrClosed is returned once Close was called.
var ErrClosed = errors.New("the daemon is shutting down: start the process again once it is back")

// spawn starts a process and registers it.
func (m *Manager) spawn(ctx context.Context, start Start, r spawnReq) (*proc, error) {
	now := time.Now()
	p := &proc{done: make(chan struct{}), notifyEnd: !r.wait}
	p.rec = Record{Handle: runtime.NewID("proc_", now), Agent: r.agent, Session: r.session, Command: r.command,
		Label: r.label, Workdir: r.workdir, Status: Running, Started: now.UTC(), Timeout: int(r.timeout / time.Second),
		Interactive: r.interactive, Workspace: r.workspace}
	p.rec.Log = logName(p.rec.Handle)
	if err := m.reserve(p); err != nil {
		return nil, err
	}
	if m.firstSpawn() {
		m.prune(ctx)
	}
	root, err := openRoot(r.workspace)
	if err == nil {
		err = m.launch(ctx, start, root, p, r)
		root.Close()
	}
	if err != nil {
		m.release(p)
		return nil, err
	}
	return p, nil
}

// launch creates p's log in the workspace root, starts the command,
// registers it and hands it to its goroutine; on error nothing of it is
// left, not even the log.
func (m *Manager) launch(ctx context.Context, start Start, root *os.Root, p *proc, r spawnReq) error {
	if r.workdir != "" {
		// The process works in the call's folder (a subagent's may be its
		// parent's: tools.WorkspaceFor); the log stays in root.
		dir, _ := tools.WorkspaceFor(ctx, r.workspace)
		if fi, err := statIn(dir, r.workdir); err != nil || !fi.IsDir() {
			return fmt.Errorf("workdir %q is not a folder of the workspace: create it first, or leave workdir out", r.workdir)
		}
	}
	lf, err := createLog(root, p.rec.Log, m.o.MaxLogBytes)
	if err != nil {
		return err
	}
	// stderr joins stdout inside, in the order written; bwrap's own
	// complaints (Process.Stderr) are added at the end.
	bp, err := start(ctx, r.dir, []string{"/bin/bash", "-c", "exec 2>&1\n" + r.command})
	if err == nil {
		err = m.register(ctx, p, bp, lf, r)
		if err != nil {
			bp.Kill()
			_ = bp.Wait()
		}
	}
	if err != nil {
		lf.Close()
		_ = root.Remove(p.rec.Log) // no record names it
	}
	return err
}

// statIn stats p inside the folder dir, refusing a way out of it.
func statIn(dir, p string) (os.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Stat(p)
}

// register records p, running as bp, and starts its goroutine and
// timeout.
func (m *Manager) register(ctx context.Context, p *proc, bp *bwrap.Process, lf *logFile, r spawnReq) error {
	if r.interactive {
		p.stdin = bp.Stdin
	} else {
		_ = bp.Stdin.Close() // reads get end-of-file, as from /dev/null
	}
	rec := p.rec
	rec.Pid = bp.Pid
	put, err := putRecord(rec)
	if err == nil {
		err = m.o.Store.Commit(ctx, put)
	}
	if err != nil {
		return fmt.Errorf("the process could not be registered (%v): try again", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	p.bp, p.rec = bp, rec
	if end := func() { m.stop(p, TimedOut) }; m.timeouts != nil {
		m.timeouts(rec.Handle, end)
	} else {
		p.timers = append(p.timers, time.AfterFunc(r.timeout, end))
	}
	m.wg.Go(func() { m.copyOut(p, lf) })
	return nil
}

// reserve counts p among the running processes, or says why not.
func (m *Manager) reserve(p *proc) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if len(m.running) >= m.o.Total {
		return fmt.Errorf("%d background processes are running on this daemon, the most it allows: kill one first", m.o.Total)
	}
	n := 0
	for _, q := range m.running {
		if q.rec.Agent == p.rec.Agent {
			n++
		}
	}
	if n >= m.o.PerAgent {
		return fmt.Errorf("this agent has %d background processes running, the most it may: kill one first", n)
	}
	if m.running == nil {
		m.running = make(map[string]*proc)
	}
	m.running[p.rec.Handle] = p
	return nil
}

func (m *Manager) release(p *proc) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.running, p.rec.Handle)
	if len(m.running) == 0 {
		m.running = nil // idle: nothing kept
	}
}

// firstSpawn reports whether p is the only process running: the manager
// was idle, a good moment to prune the registry.
func (m *Manager) firstSpawn() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.running) == 1
}

// copyOut is a running process's goroutine: it copies the output to the
// log, checks the watched pattern on each line, then waits for the
// process and records how it ended.
func (m *Manager) copyOut(p *proc, lf *logFile) {
	buf := make([]byte, 32<<10)
	var line lineScan
	for {
		n, err := p.bp.Stdout.Read(buf)
		if n > 0 {
			_, _ = lf.Write(buf[:n])
			m.scan(p, &line, buf[:n])
		}
		if err != nil {
			break
		}
	}
	werr := p.bp.Wait()
	if said := p.bp.Stderr(); len(said) > 0 {
		fmt.Fprintf(lf, "\n[sandbox: %s]\n", said)
	}
	_ = lf.Close()
	m.finish(p, werr)
}

// exitCode is how a process ended: its exit code, or 128+signal.
func exitCode(err error) int {
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// finish records the end of p, then tells OnExit and, when it watches,
// the session.
func (m *Manager) finish(p *proc, werr error) {
	code := exitCode(werr)
	m.mu.Lock()
	for _, t := range p.timers {
		t.Stop()
	}
	p.timers = nil
	rec := p.rec
	rec.Status, rec.ExitCode, rec.Ended = Exited, &code, time.Now().UTC()
	if p.end != "" {
		rec.Status = p.end
	}
	p.final = rec
	notify := p.notifyEnd && !m.closed
	closed := m.closed
	delete(m.running, rec.Handle)
	if len(m.running) == 0 {
		m.running = nil
	}
	m.mu.Unlock()
	p.closeStdin()
	if !closed { // at shutdown the record stays running: the next start says lost
		ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
		put, err := putRecord(rec)
		if err == nil {
			err = m.o.Store.Commit(ctx, put)
		}
		cancel()
		if err != nil {
			m.o.Logger.Warn("cannot record the end of a background process", "handle", rec.Handle, "err", err)
		}
	}
	close(p.done)
	if closed {
		return
	}
	if m.o.OnExit != nil {
		m.o.OnExit(rec.Handle)
	}
	if notify && m.o.Notify != nil {
		m.o.Notify(rec.Agent, rec.Session, endNotice(rec))
	}
}

// stop asks p to end (SIGTERM to everything it started, closed stdin)
// and kills it after the grace.
func (m *Manager) stop(p *proc, why Status) {
	m.mu.Lock()
	if p.end != "" || p.final.Status != "" {
		m.mu.Unlock()
		return
	}
	p.end = why
	p.timers = append(p.timers, time.AfterFunc(m.o.Grace, func() { hardKill(p) }))
	m.mu.Unlock()
	p.closeStdin()
	p.bp.Interrupt(syscall.SIGTERM)
}

// hardKill ends p and everything in its sandbox; a copier still blocked
// on output held open by an escaped child (trust mode) stops a second
// later.
func hardKill(p *proc) {
	p.bp.Kill()
	if d, ok := p.bp.Stdout.(interface{ SetReadDeadline(time.Time) error }); ok {
		_ = d.SetReadDeadline(time.Now().Add(time.Second))
	}
}

func (p *proc) closeStdin() {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if p.stdin != nil {
		_ = p.stdin.Close()
		p.stdin = nil
	}
}

// Close kills every running process and waits for their goroutines.
// Their records stay running: after a restart they report lost.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	var procs []*proc
	for _, p := range m.running {
		if p.bp != nil { // one still starting sees closed, and ends itself
			procs = append(procs, p)
		}
	}
	m.mu.Unlock()
	for _, p := range procs {
		hardKill(p)
	}
	m.wg.Wait()
}

// live returns the running process of handle, or nil (also while it
// is still starting).
func (m *Manager) live(handle string) *proc {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.running[handle]; p != nil && p.bp != nil {
		return p
	}
	return nil
}

// lookup returns the record of handle as it stands: the live one while it
// runs; a stored one that says running but is not (the daemon restarted)
// is marked lost.
func (m *Manager) lookup(ctx context.Context, handle string) (Record, bool, error) {
	m.mu.Lock()
	if p := m.running[handle]; p != nil && p.bp != nil {
		defer m.mu.Unlock()
		return p.rec, true, nil
	}
	m.mu.Unlock()
	rec, ok, err := getRecord(m.o.Store, handle)
	if err != nil || !ok {
		return rec, ok, err
	}
	if rec.Status == Running {
		rec = m.markLost(ctx, rec)
	}
	return rec, true, nil
}

// markLost records that rec's process died with a daemon before this
// one; a failed write is retried at the next read.
func (m *Manager) markLost(ctx context.Context, rec Record) Record {
	if m.live(rec.Handle) != nil {
		return rec // it just started
	}
	rec.Status = Lost
	if put, err := putRecord(rec); err == nil {
		if err := m.o.Store.Commit(ctx, put); err != nil {
			m.o.Logger.Warn("cannot record a lost background process", "handle", rec.Handle, "err", err)
		}
	}
	return rec
}

// prune forgets processes that ended more than keepEnded ago, and
// removes their logs.
func (m *Manager) prune(ctx context.Context) {
	cut := time.Now().Add(-keepEnded)
	var old []Record
	_ = scanRecords(m.o.Store, func(r Record) {
		if r.Status != Running && !r.Ended.IsZero() && r.Ended.Before(cut) ||
			r.Status == Lost && r.Started.Before(cut) {
			old = append(old, r)
		}
	})
	if len(old) == 0 {
		return
	}
	handles := make([]string, len(old))
	for i, r := range old {
		handles[i] = r.Handle
		if r.Log != logName(r.Handle) {
			continue // not a log of ours: left alone
		}
		if root, err := openRoot(r.Workspace); err == nil {
			_ = root.Remove(r.Log)
			root.Close()
		}
	}
	if err := m.o.Store.Commit(ctx, deleteRecords(handles)); err != nil {
		m.o.Logger.Warn("cannot prune old background processes", "err", err)
	}
}
