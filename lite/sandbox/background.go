package sandbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/lite/bgproc"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// ForBackground starts an agent's background processes in its sandbox,
// as bash runs a command there (the workspace handed to run_as, the
// skills read-only, the minimal environment, the limits, the network only
// when network is set) but with no deadline: the bgproc manager ends it.
// A full workspace or disk refuses the start; no disk watcher follows it
// (the file size cap set at its start is what bounds each file it
// writes).
func (s *Manager) ForBackground(a *agents.Agent, network bool) bgproc.Start {
	ws := a.Workspace
	var skills []string
	for _, sk := range a.Skills {
		skills = append(skills, sk.Dir)
	}
	return func(ctx context.Context, dir string, command []string) (*bwrap.Process, error) {
		r := s.runner(true)
		p := bwrap.Policy{Workspace: ws, Network: network, Chdir: dir, ReadOnly: skillMounts(skills)}
		// A subagent's process runs in the folder its call works in; its
		// log stays in the agent's own workspace, where the manager keeps it.
		p.Workspace, p.WorkspaceReadOnly = tools.WorkspaceFor(ctx, ws)
		if !r.Trust {
			st := s.probe()
			if !st.Usable {
				return nil, fmt.Errorf("the sandbox is unavailable, so no background process can start: %s", st.Problem)
			}
			if s.runAsErr != nil {
				return nil, s.runAsErr
			}
			p.RunAs = s.runAs
		}
		room, full, err := s.roomForCall(p)
		if err != nil {
			return nil, err
		}
		if full != "" {
			return nil, errors.New(full)
		}
		p.FileMB = min(room, bwrap.DefaultFileMB)
		p.TmpMB = s.cfg.TmpMB
		return r.Start(ctx, p, command)
	}
}
