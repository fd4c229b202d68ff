package plugin

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Queue sizes: lines parsed from a plugin waiting for the run goroutine,
// and commands waiting for the plugin to read them.
const (
	eventQueue   = 64
	commandQueue = 64
	// stderrLine bounds one logged stderr line.
	stderrLine = 2 << 10
)

// proc is one run of a plugin's process and the goroutines that serve
// its pipes: a reader of stdout (parsing), a reader of stderr (logging)
// and a writer of stdin (from a bounded queue). The run goroutine owns it.
type proc struct {
	name   string
	cmd    *exec.Cmd
	log    *slog.Logger
	events chan Event    // parsed stdout lines; closed at stdout's end
	queue  chan []byte   // encoded commands
	exited chan struct{} // closed when the process has been waited for
	err    error         // the exit status, set before exited closes
	done   chan struct{} // closed by close: the pipe goroutines stop
	stdin  *os.File
	outR   *os.File
	errR   *os.File
	wg     sync.WaitGroup
	// sig, when set, is called instead of signalling the process (a
	// test seam).
	sig func(syscall.Signal)
}

type procConfig struct {
	name, command string
	args, env     []string
	writeTimeout  time.Duration
	log           *slog.Logger
	garbage       *limiter
}

// startProc starts the plugin with its pipes. The environment is
// cfg.env (the plugin's declared one) over PATH, HOME and LANG: never the
// daemon's, which holds its secrets. It is not logged.
func startProc(cfg procConfig) (*proc, error) {
	var files [6]*os.File // inR, inW, outR, outW, errR, errW
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(files[:i])
			return nil, err
		}
		files[i], files[i+1] = r, w
	}
	cmd := exec.Command(cfg.command, cfg.args...)
	cmd.Env = append(baseEnv(), cfg.env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = files[0], files[3], files[5]
	cmd.SysProcAttr = sysProcAttr()
	err := cmd.Start()
	closeAll([]*os.File{files[0], files[3], files[5]}) // the child's ends
	if err != nil {
		closeAll([]*os.File{files[1], files[2], files[4]})
		return nil, err
	}
	p := &proc{
		name: cfg.name, cmd: cmd, log: cfg.log,
		events: make(chan Event, eventQueue), queue: make(chan []byte, commandQueue),
		exited: make(chan struct{}), done: make(chan struct{}),
		stdin: files[1], outR: files[2], errR: files[4],
	}
	p.wg.Add(4)
	go func() { defer p.wg.Done(); p.err = cmd.Wait(); close(p.exited) }()
	go func() { defer p.wg.Done(); p.readStdout(cfg.garbage) }()
	go func() { defer p.wg.Done(); p.readStderr() }()
	go func() { defer p.wg.Done(); p.writeStdin(cfg.writeTimeout) }()
	return p, nil
}

// baseEnv is what a plugin gets of the daemon's environment: where
// programs are, its home and language, with defaults when unset.
func baseEnv() []string {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/", "LANG=C.UTF-8"}
	for i, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if v, ok := os.LookupEnv(name); ok && v != "" {
			env[i] = name + "=" + v
		}
	}
	return env
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// send queues a command without blocking; false means the queue is full
// (the plugin does not read its stdin) and the command was dropped.
func (p *proc) send(c Command) bool {
	select {
	case p.queue <- Encode(c):
		return true
	default:
		return false
	}
}

func (p *proc) readStdout(garbage *limiter) {
	defer p.outR.Close()
	defer close(p.events)
	lr := newLineReader(p.outR, MaxLine)
	for {
		line, err := lr.next()
		if errors.Is(err, errLineTooLong) {
			garbage.log(p.log, slog.LevelWarn, "plugin wrote a line too long; skipped", "plugin", p.name, "max_bytes", MaxLine)
			continue
		}
		if err != nil {
			return
		}
		if len(line) == 0 {
			continue
		}
		ev, err := Parse(line)
		if err != nil {
			garbage.log(p.log, slog.LevelWarn, "plugin wrote a line that is not the protocol; skipped",
				"plugin", p.name, "err", err, "line", clip(line, 200))
			continue
		}
		if ev == nil {
			continue // a type from a newer protocol
		}
		select {
		case p.events <- ev:
		case <-p.done:
			return
		}
	}
}

func (p *proc) readStderr() {
	defer p.errR.Close()
	lim := newLimiter(20, time.Second)
	lr := newLineReader(p.errR, stderrLine)
	for {
		line, err := lr.next()
		if errors.Is(err, errLineTooLong) {
			continue
		}
		if err != nil {
			return
		}
		if len(line) > 0 {
			lim.log(p.log, slog.LevelInfo, p.name+": "+string(line), "plugin", p.name)
		}
	}
}

// writeStdin writes queued commands, each within timeout. After a failed
// write (the plugin exited, or stopped reading) the stream may hold half
// a line, so nothing more is written: the queue is drained until close,
// and the missing pongs get the plugin restarted.
func (p *proc) writeStdin(timeout time.Duration) {
	defer p.stdin.Close()
	broken := false
	for {
		select {
		case <-p.done:
			return
		case line := <-p.queue:
			if broken {
				continue
			}
			_ = p.stdin.SetWriteDeadline(time.Now().Add(timeout))
			if _, err := p.stdin.Write(line); err != nil {
				broken = true
				p.log.Warn("cannot write to the plugin; commands to it are dropped until it restarts",
					"plugin", p.name, "err", err)
			}
		}
	}
}

// signal signals the plugin's process group (it may have children).
func (p *proc) signal(sig syscall.Signal) {
	if p.sig != nil {
		p.sig(sig)
		return
	}
	if err := syscall.Kill(-p.pid(), sig); err != nil {
		_ = p.cmd.Process.Signal(sig)
	}
}

// terminate stops the plugin: shutdown, then SIGTERM after grace, then
// SIGKILL after another grace. It returns once the process has exited.
func (p *proc) terminate(grace time.Duration) {
	p.send(Shutdown{})
	t := time.NewTimer(grace)
	defer t.Stop()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-p.exited:
			return
		case <-t.C:
			p.log.Warn("plugin did not exit in time; signalling it", "plugin", p.name, "signal", sig.String())
			p.signal(sig)
			t.Reset(grace)
		}
	}
	<-p.exited
}

// close stops the pipe goroutines of an exited process and waits for
// them. The readers get a moment to read what the plugin wrote last; a
// grandchild that holds the pipes open does not keep them longer.
func (p *proc) close() {
	close(p.done)
	_ = p.stdin.SetWriteDeadline(time.Now())
	t := time.AfterFunc(time.Second, func() {
		_ = p.outR.SetReadDeadline(time.Now())
		_ = p.errR.SetReadDeadline(time.Now())
	})
	p.wg.Wait()
	t.Stop()
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
