package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// cancelGrace is how long a cancelled agent gets to end its turn before
// its process tree is killed.
const cancelGrace = 5 * time.Second

// ACPRunner runs an agent that speaks the Agent Client Protocol on its
// stdin and stdout (claude-code-acp, codex-acp, gemini --experimental-acp,
// opencode acp, agnx-lite acp).
type ACPRunner struct {
	cfg      RunnerConfig
	ask      askFunc
	progress func(context.Context, string)
	grace    time.Duration
}

var _ Runner = (*ACPRunner)(nil)

// NewACPRunner returns the Runner of an acp: entry; cfg.Argv is the
// agent's command line.
func NewACPRunner(cfg RunnerConfig) *ACPRunner {
	return &ACPRunner{cfg: cfg, ask: runtime.AskAll, progress: runtime.Progress, grace: cancelGrace}
}

// errTimeout is the cause of a run's context past its timeout.
var errTimeout = errors.New("worker timeout")

// Run starts the agent in the sandbox, opens a session in job.Dir (or
// loads job.Resume), sends the prompt and returns the agent's final
// message. The process tree is killed before Run returns, whatever
// happened.
func (r *ACPRunner) Run(ctx context.Context, job Job) (Outcome, error) {
	if len(r.cfg.Argv) == 0 {
		return Outcome{}, fmt.Errorf("worker %q has no acp: command: give its entry one", r.cfg.Name)
	}
	limit := r.cfg.timeout(job)
	runCtx, cancel := context.WithTimeoutCause(ctx, limit, errTimeout)
	defer cancel()
	proc, stop, err := r.cfg.start(runCtx, job, r.cfg.Argv)
	if err != nil {
		return Outcome{Stop: "error"}, err
	}
	defer stop()
	root, err := os.OpenRoot(job.Dir)
	if err != nil {
		return Outcome{Stop: "error"}, fmt.Errorf("the worker's folder %s cannot be opened (%v): check that it exists", job.Dir, err)
	}
	defer root.Close()
	guard := newLineGuard(proc.Stdout())
	defer guard.close()
	cl := &acpClient{worker: r.cfg.Name, runCtx: ctx, ask: r.ask,
		fs:   &workFS{root: root, inside: proc.InsideDir()},
		prog: &progress{send: r.progress, ctx: ctx}}
	defer cl.prog.flush()
	conn := acp.NewClientSideConnection(cl, proc.Stdin(), guard)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	t := &acpTurn{r: r, conn: conn, cl: cl, proc: proc, guard: guard, inside: proc.InsideDir()}
	out, err := t.run(runCtx, job)
	if err != nil {
		out.Stop = "error"
		err = r.why(ctx, runCtx, limit, t, err)
		if ctx.Err() != nil {
			out.Stop = "cancelled"
		}
	}
	return out, err
}

// why turns a failed run into one sentence: the guard's, the timeout's,
// the caller's cancel, or the agent's own end.
func (r *ACPRunner) why(ctx, runCtx context.Context, limit time.Duration, t *acpTurn, err error) error {
	name := r.cfg.Name
	switch {
	case t.guard.failure() != nil:
		return fmt.Errorf("worker %q was stopped because %v: check that its acp: command starts an ACP agent on stdio", name, t.guard.failure())
	case ctx.Err() != nil:
		return fmt.Errorf("worker %q was cancelled before it finished", name)
	case errors.Is(context.Cause(runCtx), errTimeout):
		return timedOut(limit)
	}
	if exited(t.conn.Done(), t.proc) {
		if said := firstLine(t.proc.Stderr()); said != "" {
			return fmt.Errorf("worker %q ended before it finished (it said: %s): check its acp: command and env", name, said)
		}
		return fmt.Errorf("worker %q ended before it finished: check its acp: command and env", name)
	}
	var re *acp.RequestError
	if errors.As(err, &re) {
		return fmt.Errorf("worker %q refused the request (%s): check that it supports ACP version %d", name, cut(re.Error(), 200), acp.ProtocolVersionNumber)
	}
	return fmt.Errorf("worker %q failed: %v", name, cut(err.Error(), 200))
}

// exited says whether the worker's process ended, giving it a moment
// when its output closed (it is on its way out, its stderr not read yet).
func exited(closed <-chan struct{}, p Process) bool {
	select {
	case <-p.Done():
		return true
	case <-closed:
		return waitExit(p)
	default:
		return false
	}
}

// waitExit waits a moment for a process whose output ended to end.
func waitExit(p Process) bool {
	timer := time.NewTimer(2 * time.Second)
	defer timer.Stop()
	select {
	case <-p.Done():
		return true
	case <-timer.C:
		return false
	}
}
