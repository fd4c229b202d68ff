package lite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxWorkspaceEntries bounds the walk that measures a workspace, so a
// tool call never waits long for it; a workspace with more entries is
// treated as full.
const maxWorkspaceEntries = 200_000

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
//
// The walk goes through os.Root: a symlink or a rename under it cannot
// lead it, or the chown, outside the workspace. A workspace of more than
// maxWorkspaceEntries entries counts as full.
func prepareWorkspace(ws string, capMB int, owner *bwrap.User) (int, error) {
	if capMB <= 0 && owner == nil {
		return noCapMB, nil
	}
	room := noCapMB
	if capMB > 0 {
		room = capMB
	}
	root, err := os.OpenRoot(ws)
	if errors.Is(err, os.ErrNotExist) {
		return room, nil
	}
	if err != nil {
		return 0, fmt.Errorf("the workspace cannot be opened (%v): check its permissions", err)
	}
	defer root.Close()
	used, entries := int64(0), 0
	walk := func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone meanwhile, or unreadable: not counted
		}
		if entries++; entries > maxWorkspaceEntries {
			return fs.SkipAll
		}
		fi, err := root.Lstat(path)
		if err != nil {
			return nil
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		used += st.Blocks * 512
		if owner != nil && (st.Uid != owner.UID || st.Gid != owner.GID) && (fi.IsDir() || st.Nlink == 1) {
			// A file with other hard links may be a file outside: left alone.
			_ = root.Lchown(path, int(owner.UID), int(owner.GID))
		}
		return nil
	}
	if err := fs.WalkDir(root.FS(), ".", walk); err != nil {
		return 0, fmt.Errorf("the workspace cannot be measured (%v): check its permissions", err)
	}
	if capMB <= 0 {
		return room, nil
	}
	if entries > maxWorkspaceEntries {
		return 0, nil
	}
	return capMB - int(used>>20), nil
}

// workspaceFull is what a writing tool says when the workspace is full.
func workspaceFull(capMB int) string {
	return fmt.Sprintf("the workspace is full (sandbox.workspace_mb is %d MB, or more than %d entries): "+
		"delete files from it (rm still works in bash) before writing more", capMB, maxWorkspaceEntries)
}

// capped returns t, a tool writing into the workspace ws, refusing its
// calls while ws is full.
func (s *sandboxes) capped(ws string, t runtime.Tool) runtime.Tool {
	if s.cfg.WorkspaceMB <= 0 {
		return t
	}
	return &cappedTool{Tool: t, ws: ws, s: s}
}

type cappedTool struct {
	runtime.Tool
	ws string
	s  *sandboxes
}

var _ runtime.Subjecter = (*cappedTool)(nil)

func (c *cappedTool) Run(ctx context.Context, args []byte) (runtime.Result, error) {
	capMB := c.s.cfg.WorkspaceMB
	room, err := prepareWorkspace(c.ws, capMB, nil)
	if err != nil {
		return runtime.ErrorResult("error: " + err.Error()), nil
	}
	if room <= 0 {
		return runtime.ErrorResult("error: " + workspaceFull(capMB)), nil
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
