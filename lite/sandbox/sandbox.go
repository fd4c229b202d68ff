package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// Manager hands each agent a tools.Sandbox over one bwrap.Runner, and
// starts MCP servers, coding-agent workers and background processes in
// sandboxes of the same kind. The probe runs on first use (an agent
// without shell tools never pays for it) and its answer is kept, unless
// the machine was too busy to give one: then the next use probes again.
type Manager struct {
	cfg   config.Sandbox
	log   *slog.Logger
	owner *bwrap.Owner // this instance, as the owner of the sandboxes it starts
	// diskFloorMB is the free space a writing tool leaves on the disk
	// holding the workspace (diskFloorMB; tests lower or raise it).
	diskFloorMB int
	// reserveGone is Options.ReserveGone; nil: never.
	reserveGone func() bool

	// probeWith is the probe (bwrap.Runner.Probe; tests replace it).
	probeWith func(context.Context) bwrap.Status
	probeMu   sync.Mutex
	probed    bool // status is final
	status    bwrap.Status
	runAs     *bwrap.User // who commands run as; nil: the daemon's own user
	runAsErr  error
}

// Options are what a Manager is made of.
type Options struct {
	// Config is agnx.yaml's sandbox: section, copied: a change to it
	// after New is not seen.
	Config config.Sandbox
	// DataDir is the daemon's data dir: the record of the sandboxes this
	// instance starts lives under it (RunDir), for Reap.
	DataDir string
	// Logger gets the sandbox's warnings (an unusable or too busy
	// bubblewrap, trust mode); nil discards them.
	Logger *slog.Logger
	// ReserveGone reports that the database gave up its disk reserve (the
	// disk filled up): writing tools refuse, and sandboxed commands can
	// grow no file, until it is back. nil: never (no database, outside a
	// daemon).
	ReserveGone func() bool
}

// New returns the Manager of o. It probes nothing and starts nothing
// until a sandbox is first used; Close removes what it leaves on disk.
func New(o Options) *Manager {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{cfg: o.Config, log: log, owner: &bwrap.Owner{Dir: RunDir(o.DataDir)}, diskFloorMB: diskFloorMB,
		reserveGone: o.ReserveGone}
}

// RunDir holds a record per daemon instance on the data dir dataDir that
// ran sandboxes (bwrap.Owner): what Reap reads.
func RunDir(dataDir string) string { return filepath.Join(dataDir, "run", "sandbox") }

// Reap ends the sandboxes a killed instance on the data dir dataDir left
// running (see bwrap.Owner), and logs what it did. The daemon calls it
// once it holds the database, so no other live daemon uses this data
// dir; bwrap.Reap checks that each record's owner is dead anyway.
func Reap(dataDir string, log *slog.Logger) {
	n, err := bwrap.Reap(RunDir(dataDir))
	if err != nil {
		log.Warn("cannot end the sandboxes a previous run left behind", "err", err)
	}
	if n > 0 {
		log.Warn("ended sandboxed processes a previous run left behind", "processes", n)
	}
}

// Close removes this instance's record: its sandboxes have ended.
func (s *Manager) Close() {
	if err := s.owner.Close(); err != nil {
		s.log.Warn("cannot remove the sandbox owner record", "err", err)
	}
}

// probe returns what the sandbox's probe found. runAs and runAsErr are
// set with the final answer, before any caller sees it usable.
func (s *Manager) probe() bwrap.Status {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if s.probed {
		return s.status
	}
	if s.cfg.Mode == "trust" {
		s.log.Warn("sandbox.mode is trust: shell and CLI tools run WITHOUT isolation, with the daemon's rights")
		s.probed = true
		return s.status
	}
	probe := s.runner(false).Probe
	if s.probeWith != nil {
		probe = s.probeWith
	}
	s.status = probe(context.Background())
	if s.status.Slow {
		s.log.Warn("the bubblewrap sandbox did not answer its probe in time: this call refuses, the next one probes again", "problem", s.status.Problem)
		return s.status
	}
	s.probed = true
	if !s.status.Usable {
		s.log.Warn("the bubblewrap sandbox is unusable: shell and CLI tools will refuse to run", "problem", s.status.Problem)
	}
	s.runAs, s.runAsErr = resolveRunAs(s.cfg.RunAs, os.Geteuid())
	if s.runAsErr == nil && s.runAs != nil && s.status.Usable {
		s.runAsErr = probeRunAs(s.runAs)
	}
	if s.runAsErr != nil {
		s.log.Warn("shell and CLI tools will refuse to run", "problem", s.runAsErr)
	}
	return s.status
}

// runner is the Runner sandboxes are run with, marked with this instance
// as their owner or not.
func (s *Manager) runner(owned bool) *bwrap.Runner {
	r := &bwrap.Runner{Trust: s.cfg.Mode == "trust", NetworkHelper: s.cfg.NetworkHelper}
	if owned {
		r.Owner = s.owner
	}
	return r
}

// ForAgent returns the sandbox of one agent's workspace for its bash and
// CLI tools, with the network only when network is set; it also shows the
// agent's skills read-only (skillMounts).
func (s *Manager) ForAgent(a *agents.Agent, network bool) tools.Sandbox {
	sb := &agentSandbox{s: s, policy: bwrap.Policy{Workspace: a.Workspace, Network: network}}
	for _, sk := range a.Skills {
		sb.skills = append(sb.skills, sk.Dir)
	}
	return sb
}

var _ tools.Sandbox = (*agentSandbox)(nil)

type agentSandbox struct {
	s      *Manager
	policy bwrap.Policy
	// skills are the folders of the agent's skills, bound read-only
	// (checked on each run: see skillMounts).
	skills []string
}

func (a *agentSandbox) Exec(ctx context.Context, e tools.Exec) (tools.ExecResult, error) {
	r := a.s.runner(true)
	st := a.s.probe()
	p := a.policy
	if !r.Trust {
		if !st.Usable {
			return tools.ExecResult{}, fmt.Errorf("the sandbox is unavailable, so this tool cannot run: %s", st.Problem)
		}
		if a.s.runAsErr != nil {
			return tools.ExecResult{}, a.s.runAsErr
		}
		p.RunAs = a.s.runAs
	}
	p.Workspace, p.WorkspaceReadOnly = tools.WorkspaceFor(ctx, p.Workspace)
	room, full, err := a.s.roomForCall(p)
	if err != nil {
		return tools.ExecResult{}, err
	}
	p.ReadOnly = append(skillMounts(a.skills), e.ReadOnly...)
	p.Chdir = e.Dir
	p.Env = e.Env
	p.SplitStderr = true
	p.Timeout = e.Timeout
	p.TmpMB = a.s.cfg.TmpMB
	// No single file may grow past what is left; a full workspace lets no
	// file grow, but deleting still works.
	p.FileMB = min(room, bwrap.DefaultFileMB)
	if room <= 0 {
		p.FileMB = -1
	}
	ctx, stop := context.WithCancelCause(ctx)
	var watch sync.WaitGroup
	defer watch.Wait() // after stop: the watcher returns when ctx ends
	defer stop(nil)
	if room > 0 && !p.WorkspaceReadOnly {
		// Only a command that may grow files is watched: on a disk already
		// under the floor, rm and du must still run to the end.
		watch.Go(func() { a.s.watchDisk(ctx, p.Workspace, stop) })
	}
	res, err := r.Run(ctx, p, e.Command, e.Stdin)
	if errors.Is(context.Cause(ctx), errDiskLow) {
		full, err = "stopped: "+diskLow(a.s.diskFloorMB), nil
		res.ExitCode = 128 + int(syscall.SIGKILL)
	}
	if err != nil {
		return tools.ExecResult{}, err
	}
	out := res.Output
	if full != "" {
		out = append([]byte("["+full+"]\n"), out...)
	}
	return tools.ExecResult{Output: out, Stderr: res.Stderr, Cut: res.Cut, ExitCode: res.ExitCode,
		TimedOut: res.TimedOut, Duration: res.Duration}, nil
}

// skillMounts are those of the folders of an agent's skills (Skill.Dir)
// that its sandbox shows read-only at the same path, so that the model can
// run a skill's scripts and read its files there (nothing else of the
// agent's folder or the data dir is visible). The loader resolved each
// folder and checked it lies in its skills folder; one that is no longer
// that real folder (a link swapped in since) is left out. Checked before
// each run, as a folder may change while the agent stays loaded. A mount
// is read-only: a skill never widens what the sandbox may write or reach.
func skillMounts(skills []string) []string {
	dirs := make([]string, 0, len(skills))
	for _, d := range skills {
		if real, err := filepath.EvalSymlinks(d); err == nil && real == d {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// probeRunAs checks that a sandbox runs as u here: without a user
// namespace, bwrap needs real root capabilities, which a container may
// not give.
func probeRunAs(u *bwrap.User) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := (&bwrap.Runner{}).Run(ctx, bwrap.Policy{RunAs: u, Limits: bwrap.Limits{Timeout: 5 * time.Second}},
		[]string{"true"}, nil)
	if err == nil && res.ExitCode == 0 {
		return nil
	}
	why := strings.TrimSpace(string(res.Output))
	if err != nil {
		why = err.Error()
	}
	return fmt.Errorf("the sandbox cannot run commands as uid %d (%s): set sandbox.run_as: root to run them "+
		"in a user namespace instead, without a process limit", u.UID, why)
}

// resolveRunAs returns the user sandboxed commands run as, for a daemon
// whose effective uid is euid: nil unless the daemon is root (it cannot
// switch users) or when run_as names root itself.
func resolveRunAs(runAs string, euid int) (*bwrap.User, error) {
	if euid != 0 {
		return nil, nil
	}
	name, ids, err := config.ParseRunAs(runAs)
	if err != nil {
		return nil, fmt.Errorf("sandbox.run_as %q %v", runAs, err)
	}
	if ids == nil {
		if name == "" {
			name = "nobody"
		}
		u, err := user.Lookup(name)
		switch {
		case err != nil && name == "nobody" && runAs == "":
			ids = &bwrap.User{UID: 65534, GID: 65534}
		case err != nil:
			return nil, fmt.Errorf("sandbox.run_as names %q, a user this system does not have: create it or give uid:gid", name)
		default:
			uid, _ := strconv.ParseUint(u.Uid, 10, 32)
			gid, _ := strconv.ParseUint(u.Gid, 10, 32)
			ids = &bwrap.User{UID: uint32(uid), GID: uint32(gid)}
		}
	}
	if ids.UID == 0 {
		return nil, nil // asked for root: a user namespace, no process limit
	}
	return ids, nil
}
