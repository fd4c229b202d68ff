package workers

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// RunnerConfig is one workers: entry, as a Runner needs it.
type RunnerConfig struct {
	// Name is the name the supervising agent uses for the worker.
	Name string
	// Argv is an ACP agent's command line (NewACPRunner).
	Argv []string
	// Binary is the claude executable and Args its extra arguments
	// (NewClaudeRunner).
	Binary string
	Args   []string
	// Network lets the worker reach the network from its own namespace.
	Network bool
	// Env is the worker's environment (already expanded) besides PATH,
	// HOME and LANG; nothing else of the daemon's gets in.
	Env map[string]string
	// Home is a folder kept across runs as the worker's HOME: its own
	// config and sessions, which Resume needs (claude keeps its sessions
	// there). "": a fresh folder per run, removed after it.
	Home string
	// ReadOnly lists more host paths the worker reads, bound read-only
	// at the same place: where its program lives when outside the system
	// folders (an absolute Argv[0] or Binary is bound by itself).
	ReadOnly []string
	// Timeout bounds a run whose Job says nothing; 0: DefaultTimeout.
	Timeout time.Duration
	// Sandbox starts the worker's process tree.
	Sandbox Sandbox
	// Allowed says, for ClaudeRunner, whether the supervising agent's
	// policy allows a tool (bash, write_file, read_file, web) without
	// asking anyone; headless claude gets those tools alone. nil: none.
	Allowed func(tool string) bool
}

// DefaultTimeout bounds a run when neither the Job nor the entry does.
const DefaultTimeout = 30 * time.Minute

func (c RunnerConfig) timeout(j Job) time.Duration {
	switch {
	case j.Timeout > 0:
		return j.Timeout
	case c.Timeout > 0:
		return c.Timeout
	}
	return DefaultTimeout
}

// Sandbox starts a worker's process tree where it is isolated the way
// the entry says (lite implements it over bwrap; workers never imports
// lite).
type Sandbox interface {
	Start(ctx context.Context, s Spawn) (Process, error)
}

// Spawn is what to start.
type Spawn struct {
	Argv []string
	// Dir is the host folder the worker works in: bound read-write, and
	// its working folder.
	Dir string
	// Home is the host folder bound read-write as HOME.
	Home string
	// Env is the whole environment besides PATH, HOME and LANG.
	Env map[string]string
	// ReadOnly lists host paths bound read-only at the same place.
	ReadOnly []string
	Network  bool
}

// Process is a started worker.
type Process interface {
	Stdin() io.WriteCloser
	Stdout() io.ReadCloser
	// InsideDir is where Spawn.Dir appears to the worker; paths the
	// worker names are under it.
	InsideDir() string
	// Kill ends the process and everything it started, at once.
	Kill()
	// Done is closed once the process has ended.
	Done() <-chan struct{}
	// Stderr is the last bytes it wrote to stderr, for the sentence that
	// says why it failed.
	Stderr() []byte
}

// spawnEnv is the worker's environment: only the entry's. The sandbox
// adds PATH and LANG; HOME is the worker's own folder.
func spawnEnv(c RunnerConfig) map[string]string {
	env := make(map[string]string, len(c.Env))
	maps.Copy(env, c.Env)
	return env
}

// home returns the worker's HOME on the host and what to do once the run
// ends: the entry's folder (made if missing), or a fresh one removed
// after.
func (c RunnerConfig) home() (string, func(), error) {
	if c.Home != "" {
		if err := os.MkdirAll(c.Home, 0o700); err != nil {
			return "", nil, fmt.Errorf("the home folder of worker %q cannot be made (%v): check the data dir's permissions", c.Name, err)
		}
		return c.Home, func() {}, nil
	}
	d, err := os.MkdirTemp("", "agnx-worker-home-")
	if err != nil {
		return "", nil, fmt.Errorf("a home folder for worker %q cannot be made (%v): check that the temp folder is writable", c.Name, err)
	}
	return d, func() { _ = os.RemoveAll(d) }, nil
}

// start checks the job and starts the worker's process in its sandbox.
func (c RunnerConfig) start(ctx context.Context, job Job, argv []string) (Process, func(), error) {
	if !filepath.IsAbs(job.Dir) {
		return nil, nil, fmt.Errorf("the worker's folder %q is not an absolute path: give it one", job.Dir)
	}
	if c.Sandbox == nil {
		return nil, nil, fmt.Errorf("worker %q has no sandbox to run in: this is a bug in how it was configured", c.Name)
	}
	home, cleanup, err := c.home()
	if err != nil {
		return nil, nil, err
	}
	ro := c.ReadOnly
	if filepath.IsAbs(argv[0]) {
		ro = append(ro[:len(ro):len(ro)], argv[0])
	}
	p, err := c.Sandbox.Start(ctx, Spawn{Argv: argv, Dir: job.Dir, Home: home, Env: spawnEnv(c), ReadOnly: ro,
		Network: c.Network})
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("worker %q cannot start: %w", c.Name, err)
	}
	return p, func() {
		p.Kill()
		// Under bwrap the tree dies with its pid namespace; in trust mode
		// a process that left the group may hold its output open, and
		// the run must not wait for it.
		timer := time.NewTimer(5 * time.Second)
		defer timer.Stop()
		select {
		case <-p.Done():
		case <-timer.C:
		}
		cleanup()
	}, nil
}

// fmtDur is a timeout as a workers: entry writes it.
func fmtDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// timedOut is the error of a run past its timeout.
func timedOut(d time.Duration) error {
	return fmt.Errorf("the worker did not finish within %s: raise timeout in its workers: entry or give it a smaller task", fmtDur(d))
}

// firstLine is the first line of what a process said on stderr.
func firstLine(b []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return cut(line, 200)
}
