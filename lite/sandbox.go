package lite

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// sandboxes hands each agent a tools.Sandbox over one bwrap.Runner. The
// probe runs once, on first use: an agent without shell tools never pays
// for it.
type sandboxes struct {
	mode string // bwrap | trust
	log  *slog.Logger

	once   sync.Once
	status bwrap.Status
}

func (s *sandboxes) probe() bwrap.Status {
	s.once.Do(func() {
		if s.mode == "trust" {
			s.log.Warn("sandbox.mode is trust: shell and CLI tools run WITHOUT isolation, with the daemon's rights")
			return
		}
		s.status = bwrap.Probe(context.Background())
		if !s.status.Usable {
			s.log.Warn("the bubblewrap sandbox is unusable: shell and CLI tools will refuse to run", "problem", s.status.Problem)
		}
	})
	return s.status
}

// forAgent returns the sandbox of one agent's workspace.
func (s *sandboxes) forAgent(workspace string, network bool) tools.Sandbox {
	return &agentSandbox{s: s, policy: bwrap.Policy{Workspace: workspace, Network: network}}
}

type agentSandbox struct {
	s      *sandboxes
	policy bwrap.Policy
}

func (a *agentSandbox) Exec(ctx context.Context, e tools.Exec) (tools.ExecResult, error) {
	r := &bwrap.Runner{Trust: a.s.mode == "trust"}
	if !r.Trust {
		if st := a.s.probe(); !st.Usable {
			return tools.ExecResult{}, fmt.Errorf("the sandbox is unavailable, so this tool cannot run: %s", st.Problem)
		}
	} else {
		a.s.probe()
	}
	p := a.policy
	p.ReadOnly = e.ReadOnly
	p.Timeout = e.Timeout
	res, err := r.Run(ctx, p, e.Command, e.Stdin)
	if err != nil {
		return tools.ExecResult{}, err
	}
	return tools.ExecResult{Output: res.Output, Cut: res.Cut, ExitCode: res.ExitCode,
		TimedOut: res.TimedOut, Duration: res.Duration}, nil
}
