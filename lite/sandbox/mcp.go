package sandbox

import (
	"context"
	"fmt"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/lite/mcp"
)

// mcpAddressSpaceMB is a stdio MCP server's address-space cap.
const mcpAddressSpaceMB = 4096

// SpawnMCP starts a stdio MCP server in the agent's sandbox, as
// mcp.Options.Spawn: its working folder the agent's workspace, its
// environment only srv.Env (already expanded by the manager) and the
// sandbox's minimal one, the network only with srv.Network, srv.ReadOnly
// bound read-only, and the limits of every other sandboxed tool. It runs
// until the manager stops it: no deadline (and no disk watcher: the file
// size cap set at its start is what bounds it).
func (s *Manager) SpawnMCP(ctx context.Context, workspace string, srv mcp.Server) (*bwrap.Process, error) {
	if srv.Command == "" {
		return nil, fmt.Errorf("MCP server %q has no command: give its entry a command", srv.Name)
	}
	r := s.runner(true)
	p := bwrap.Policy{Workspace: workspace, Network: srv.Network, ReadOnly: srv.ReadOnly, Env: srv.Env,
		SplitStderr: true}
	if !r.Trust {
		st := s.probe()
		if !st.Usable {
			return nil, fmt.Errorf("the sandbox is unavailable, so MCP server %q cannot start: %s", srv.Name, st.Problem)
		}
		if s.runAsErr != nil {
			return nil, s.runAsErr
		}
		p.RunAs = s.runAs
	}
	// As for every other sandboxed command: the workspace handed to the
	// sandbox user, and no file may grow past what the workspace cap and
	// the disk leave (none, when they leave nothing).
	room, _, err := s.roomFor(workspace, p.RunAs)
	if err != nil {
		return nil, err
	}
	p.FileMB = min(room, bwrap.DefaultFileMB)
	if room <= 0 {
		p.FileMB = -1
	}
	p.TmpMB = s.cfg.TmpMB
	// The cap is on address space, not resident memory (which Stats
	// reports): Node reserves gigabytes it never touches and dies at start
	// under the 1 GiB every other tool gets.
	p.MemoryMB = mcpAddressSpaceMB
	return r.Start(ctx, p, append([]string{srv.Command}, srv.Args...))
}
