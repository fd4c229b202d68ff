package sandbox

import (
	"context"
	"fmt"
	"io"
	"maps"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/lite/workers"
)

// workerAddressSpaceMB caps a coding agent's address space: Node (Claude
// Code, Gemini CLI) reserves far more than it touches, as for MCP servers.
const workerAddressSpaceMB = mcpAddressSpaceMB

// workerProcs is a worker's process cap: coding agents run shells,
// compilers and test runners.
const workerProcs = 256

// ForWorkers is the workers.Sandbox of coding-agent workers: trust when
// sandbox.mode is trust or trust is set (the workers: entry asks for it).
func (s *Manager) ForWorkers(trust bool) workers.Sandbox {
	return &workerSandbox{s: s, trust: trust}
}

type workerSandbox struct {
	s     *Manager
	trust bool
}

var _ workers.Sandbox = (*workerSandbox)(nil)

// Start starts a worker as SpawnMCP starts a stdio MCP server: in its
// folder (bound at /workspace), with only its entry's environment, the
// network only when granted, and every sandboxed tool's limits; its home
// is bound read-write at its own path, and a disk watcher ends it when
// the disk nears full.
func (w *workerSandbox) Start(ctx context.Context, sp workers.Spawn) (workers.Process, error) {
	if len(sp.Argv) == 0 || sp.Argv[0] == "" {
		return nil, fmt.Errorf("the worker has no command: give its entry one")
	}
	r := w.s.runner(true)
	r.Trust = r.Trust || w.trust
	env := maps.Clone(sp.Env)
	if env == nil {
		env = map[string]string{}
	}
	env["HOME"] = sp.Home
	p := bwrap.Policy{Workspace: sp.Dir, Network: sp.Network, Env: env, SplitStderr: true,
		ReadOnly: sp.ReadOnly, Writable: []string{sp.Home}}
	if !r.Trust {
		if st := w.s.probe(); !st.Usable {
			return nil, fmt.Errorf("the sandbox is unavailable, so the worker cannot start: %s", st.Problem)
		}
		if w.s.runAsErr != nil {
			return nil, w.s.runAsErr
		}
		p.RunAs = w.s.runAs
		if p.RunAs != nil {
			// The home, as the workspace, belongs to the sandbox user.
			if _, err := prepareWorkspace(sp.Home, 0, p.RunAs); err != nil {
				return nil, err
			}
		}
	}
	room, _, err := w.s.roomFor(sp.Dir, p.RunAs)
	if err != nil {
		return nil, err
	}
	p.FileMB = min(room, bwrap.DefaultFileMB)
	if room <= 0 {
		p.FileMB = -1
	}
	p.TmpMB = w.s.cfg.TmpMB
	p.MemoryMB = workerAddressSpaceMB
	p.MaxProcs = workerProcs
	proc, err := r.Start(ctx, p, sp.Argv)
	if err != nil {
		return nil, err
	}
	wp := &workerProc{p: proc, inside: "/workspace"}
	if r.Trust {
		wp.inside = sp.Dir
	}
	if room > 0 {
		wctx, cancel := context.WithCancelCause(context.Background())
		go func() {
			<-proc.Done()
			cancel(nil)
		}()
		go w.s.watchDisk(wctx, sp.Dir, func(error) { proc.Kill() })
	}
	return wp, nil
}

// workerProc is a bwrap.Process as workers.Process.
type workerProc struct {
	p      *bwrap.Process
	inside string
}

func (w *workerProc) Stdin() io.WriteCloser { return w.p.Stdin }
func (w *workerProc) Stdout() io.ReadCloser { return w.p.Stdout }
func (w *workerProc) InsideDir() string     { return w.inside }
func (w *workerProc) Kill()                 { w.p.Kill() }
func (w *workerProc) Done() <-chan struct{} { return w.p.Done() }
func (w *workerProc) Stderr() []byte        { return w.p.Stderr() }
