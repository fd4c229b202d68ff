package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// maxWorkspaceEntries and maxWorkspaceDepth bound the walk that measures
// a workspace, so a tool call never waits long for it: see
// prepareWorkspace for what happens past them.
const (
	maxWorkspaceEntries = 200_000
	maxWorkspaceDepth   = 64
)

// noCapMB is the room reported for a workspace without a cap.
const noCapMB = 1 << 30

// prepareWorkspace gets an agent's workspace ready for a tool call that
// writes to it. It measures the disk space the workspace takes and
// returns how many MB are left under capMB (0: no cap); 0 or less means
// it is full, and the call may not make it grow: the data dir's disk
// keeps room for the database. With owner set (the sandbox user of a root
// daemon), it also hands to that user what is not theirs yet (what the
// daemon's own file tools wrote), or the sandboxed command could not
// change it.
func prepareWorkspace(ws string, capMB int, owner *bwrap.User) (int, error) {
	return prepareWorkspaceUpTo(ws, capMB, owner, maxWorkspaceEntries)
}

// prepareWorkspaceUpTo is prepareWorkspace with the walk's bound on
// entries as a parameter: its test crosses a bound of thousands, not
// 200,000 files.
func prepareWorkspaceUpTo(ws string, capMB int, owner *bwrap.User, maxEntries int) (int, error) {
	room := noCapMB
	if capMB > 0 {
		room = capMB
	}
	if capMB <= 0 && owner == nil {
		return room, nil
	}
	fd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return room, nil
	}
	if err != nil {
		return 0, fmt.Errorf("the workspace cannot be opened (%v): check its permissions", err)
	}
	w := &wsWalk{owner: owner, maxEntries: maxEntries}
	if owner != nil {
		_ = unix.Fchown(fd, int(owner.UID), int(owner.GID))
	}
	// Past maxWorkspaceEntries (a big node_modules) what was seen counts,
	// and the disk floor guards the rest; a tree deeper than anything a
	// tool makes is one built to hide from the walk: full.
	_ = w.dir(fd, 0)
	if capMB <= 0 {
		return room, nil
	}
	if w.tooDeep {
		return 0, nil
	}
	return capMB - int(w.used>>20), nil
}

// errTooBig stops a walk past maxWorkspaceEntries.
var errTooBig = errors.New("workspace too big to measure")

// wsWalk adds up a workspace's disk space. Every step is relative to an
// open directory and follows no symlink, so a link or a rename made
// during the walk cannot lead it, or its chown, outside the workspace.
type wsWalk struct {
	owner      *bwrap.User
	used       int64
	entries    int
	maxEntries int  // past it, the walk stops: what was seen counts
	tooDeep    bool // a subtree was too deep to measure: a tree built to evade the cap
}

// dir walks the open directory fd, and closes it.
func (w *wsWalk) dir(fd, depth int) error {
	f := os.NewFile(uintptr(fd), "workspace")
	defer f.Close()
	if depth > maxWorkspaceDepth {
		w.tooDeep = true
		return nil
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil {
		w.used += st.Blocks * 512
	}
	for {
		names, err := f.Readdirnames(1024)
		if err != nil {
			return nil // the end, or unreadable: what was seen counts
		}
		for _, name := range names {
			if w.entries++; w.entries > w.maxEntries {
				return errTooBig
			}
			if err := w.entry(fd, name, depth); err != nil {
				return err
			}
		}
	}
}

func (w *wsWalk) entry(dirfd int, name string, depth int) error {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return nil // gone meanwhile
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if o := w.owner; o != nil && (st.Uid != o.UID || st.Gid != o.GID) && (isDir || st.Nlink == 1) {
		// A file with other hard links may be a file outside: left alone.
		_ = unix.Fchownat(dirfd, name, int(o.UID), int(o.GID), unix.AT_SYMLINK_NOFOLLOW)
	}
	if !isDir {
		w.used += st.Blocks * 512
		return nil
	}
	sub, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return w.dir(sub, depth+1)
}

// diskFloorMB is the free space writing tools leave on the disk holding
// the workspace, the data dir's disk as a rule: room for the database.
const diskFloorMB = 64

// errDiskLow ends a sandboxed command that brought its disk under the
// floor.
var errDiskLow = errors.New("the disk is nearly full")

// roomFor returns how many MB a writing call may add to the workspace ws,
// and, when none, why (one sentence). See prepareWorkspace.
func (s *Manager) roomFor(ws string, owner *bwrap.User) (int, string, error) {
	room, err := prepareWorkspace(ws, s.cfg.WorkspaceMB, owner)
	if err != nil {
		return 0, "", err
	}
	if room <= 0 {
		return 0, workspaceFull(s.cfg.WorkspaceMB), nil
	}
	if s.reserveGone != nil && s.reserveGone() {
		return 0, diskFull, nil
	}
	if free, ok := freeMB(ws); ok {
		if room = min(room, free-s.diskFloorMB); room <= 0 {
			return 0, diskLow(s.diskFloorMB), nil
		}
	}
	return room, "", nil
}

// roomForCall is roomFor the workspace p binds. A read-only workspace
// (a subagent in its parent's) is not measured: nothing is written there
// and only /tmp, capped on its own, can grow; trust mode, which cannot
// keep a command from writing to it, refuses (bwrap.ErrTrustReadOnly).
func (s *Manager) roomForCall(p bwrap.Policy) (int, string, error) {
	if !p.WorkspaceReadOnly {
		return s.roomFor(p.Workspace, p.RunAs)
	}
	if s.cfg.Mode == "trust" {
		return 0, "", bwrap.ErrTrustReadOnly
	}
	if p.RunAs != nil {
		// Handed to the sandbox user, as the parent's own commands would,
		// or that user could not read it.
		if _, err := prepareWorkspace(p.Workspace, 0, p.RunAs); err != nil {
			return 0, "", err
		}
	}
	return bwrap.DefaultFileMB, "", nil
}

// watchDisk stops a sandboxed command, through stop, once the disk
// holding ws has less than the floor free: RLIMIT_FSIZE bounds one file,
// not how many a command writes.
func (s *Manager) watchDisk(ctx context.Context, ws string, stop context.CancelCauseFunc) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if free, ok := freeMB(ws); ok && free < s.diskFloorMB {
				stop(errDiskLow)
				return
			}
		}
	}
}

// freeMB is the space an unprivileged user may still use on the disk
// holding path.
func freeMB(path string) (int, bool) {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return 0, false
	}
	return int(st.Bavail * uint64(st.Bsize) >> 20), true
}

func diskLow(floorMB int) string {
	return fmt.Sprintf("the disk holding the workspace has less than %d MB free: delete files from the workspace "+
		"(rm still works in bash) or free disk space before writing more", floorMB)
}

// diskFull is what a writing tool says while the database's disk reserve
// is used up: the disk filled, and what is left is for the conversation.
const diskFull = "the disk holding the data dir filled up and the database is using its reserve: " +
	"delete files from the workspace (rm still works in bash) or free disk space before writing more"

// workspaceFull is what a writing tool says when the workspace is full.
func workspaceFull(capMB int) string {
	return fmt.Sprintf("the workspace is full (sandbox.workspace_mb is %d MB, or folders more than %d levels deep): "+
		"delete files from it (rm still works in bash) before writing more", capMB, maxWorkspaceDepth)
}

// Capped returns t, a tool writing into the workspace ws (write_file,
// edit_file), refusing its calls while ws is full, the disk nearly full or
// the database's disk reserve gone.
func (s *Manager) Capped(ws string, t runtime.Tool) runtime.Tool {
	return &cappedTool{Tool: t, ws: ws, s: s}
}

type cappedTool struct {
	runtime.Tool
	ws string
	s  *Manager
}

var _ runtime.Subjecter = (*cappedTool)(nil)

// Run measures the folder the call works in (tools.WorkspaceFor); a
// read-only call goes straight to the tool, which refuses it.
func (c *cappedTool) Run(ctx context.Context, args []byte) (runtime.Result, error) {
	ws, readOnly := tools.WorkspaceFor(ctx, c.ws)
	if readOnly {
		return c.Tool.Run(ctx, args)
	}
	_, full, err := c.s.roomFor(ws, nil)
	if err != nil {
		return runtime.ErrorResult("error: " + err.Error()), nil
	}
	if full != "" {
		return runtime.ErrorResult("error: " + full), nil
	}
	return c.Tool.Run(ctx, args)
}

// Subject is the wrapped tool's, for policies.
func (c *cappedTool) Subject(args []byte) string {
	if sj, ok := c.Tool.(runtime.Subjecter); ok {
		return sj.Subject(args)
	}
	return ""
}
