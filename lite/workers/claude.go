package workers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// ClaudeRunner runs Claude Code's headless CLI where no ACP adapter is
// installed: `claude -p --output-format stream-json --verbose` with the
// task on stdin, `--resume ID` to go on with a session.
//
// Headless claude cannot ask anyone, so the supervising agent's policy
// is applied before it starts: RunnerConfig.Allowed says which of our
// tools (bash, write_file, read_file, web) the policy allows without
// asking, and the claude tools that map to them are passed in
// --allowedTools. Its read-only tools, which claude would use unasked,
// go in --disallowedTools when not allowed; any other tool it calls is
// refused, and the refusals (the result's permission_denials) end the
// outcome's text, so the supervisor can ask the user and resume the
// worker with more allowed.
type ClaudeRunner struct {
	cfg      RunnerConfig
	progress func(context.Context, string)
}

var _ Runner = (*ClaudeRunner)(nil)

// NewClaudeRunner returns the Runner of a claude: entry; cfg.Binary is
// the claude executable, cfg.Args extra arguments after ours (a later
// --output-format json is understood too).
func NewClaudeRunner(cfg RunnerConfig) *ClaudeRunner {
	return &ClaudeRunner{cfg: cfg, progress: runtime.Progress}
}

// claudeTools maps Claude Code's tools to the tool of ours a policy
// names for the same thing.
var claudeTools = []struct {
	name, ours string
	readOnly   bool
}{
	{"Bash", "bash", false}, {"BashOutput", "bash", false}, {"KillShell", "bash", false},
	{"Edit", "write_file", false}, {"MultiEdit", "write_file", false}, {"Write", "write_file", false},
	{"NotebookEdit", "write_file", false},
	{"Read", "read_file", true}, {"Glob", "read_file", true}, {"Grep", "read_file", true}, {"LS", "read_file", true},
	{"WebFetch", "web", false}, {"WebSearch", "web", false},
}

func (r *ClaudeRunner) argv(job Job) []string {
	bin := r.cfg.Binary
	if bin == "" {
		bin = "claude"
	}
	a := []string{bin, "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "default"}
	var allowed, denied []string
	for _, t := range claudeTools {
		switch {
		case r.cfg.Allowed != nil && r.cfg.Allowed(t.ours):
			allowed = append(allowed, t.name)
		case t.readOnly:
			denied = append(denied, t.name)
		}
	}
	allowed = append(allowed, "TodoWrite") // its own plan: touches nothing
	a = append(a, "--allowedTools", strings.Join(allowed, ","))
	if len(denied) > 0 {
		a = append(a, "--disallowedTools", strings.Join(denied, ","))
	}
	if job.Resume != "" {
		a = append(a, "--resume", job.Resume)
	}
	return append(a, r.cfg.Args...)
}

// Run starts claude in the sandbox with the prompt on its stdin and
// reads its output to the result. The process tree is killed before Run
// returns.
func (r *ClaudeRunner) Run(ctx context.Context, job Job) (Outcome, error) {
	limit := r.cfg.timeout(job)
	runCtx, cancel := context.WithTimeoutCause(ctx, limit, errTimeout)
	defer cancel()
	proc, stop, err := r.cfg.start(runCtx, job, r.argv(job))
	if err != nil {
		return Outcome{Stop: "error"}, err
	}
	defer stop()
	go func() {
		// A prompt bigger than the pipe waits for claude to read it; the
		// kill at the end unblocks it.
		_, _ = io.WriteString(proc.Stdin(), job.Prompt)
		_ = proc.Stdin().Close()
	}()
	prog := &progress{send: r.progress, ctx: ctx}
	defer prog.flush()
	st := &claudeStream{say: prog.say}
	read := make(chan error, 1)
	go func() { read <- st.read(proc.Stdout()) }()
	select {
	case err = <-read:
	case <-runCtx.Done():
		proc.Kill()
		drain(read, proc)
	}
	out := Outcome{SessionID: st.session, Stop: "error"}
	switch {
	case ctx.Err() != nil:
		out.Stop = "cancelled"
		return out, fmt.Errorf("worker %q was cancelled before it finished", r.cfg.Name)
	case errors.Is(context.Cause(runCtx), errTimeout):
		return out, timedOut(limit)
	case err != nil:
		proc.Kill()
		return out, fmt.Errorf("worker %q was stopped because %v: check that its claude: entry names Claude Code", r.cfg.Name, err)
	case st.result == nil:
		waitExit(proc)
		if said := firstLine(proc.Stderr()); said != "" {
			return out, fmt.Errorf("worker %q ended without a result (it said: %s): check its claude: entry, args and env", r.cfg.Name, said)
		}
		return out, fmt.Errorf("worker %q ended without a result: check its claude: entry, args and env", r.cfg.Name)
	}
	return r.outcome(out, st.result)
}

// outcome is what a result says. Running out of turns is an outcome (the
// work so far can be reviewed and resumed); any other error is an error.
func (r *ClaudeRunner) outcome(out Outcome, res *claudeResult) (Outcome, error) {
	out.Text = res.text
	if len(res.denials) > 0 {
		out.Text += "\n[claude was refused, by the supervising agent's policy: " + strings.Join(res.denials, "; ") +
			". Ask the user whether to allow them, then resume this worker]"
	}
	switch {
	case res.subtype == "success" && !res.isError:
		out.Stop = "end_turn"
		return out, nil
	case res.subtype == "error_max_turns":
		out.Stop = "max_turn_requests"
		return out, nil
	}
	why := firstLine([]byte(res.text))
	if why == "" {
		why = res.subtype
	}
	return out, fmt.Errorf("worker %q stopped with an error (%s): check its claude: entry and what it says", r.cfg.Name, why)
}

// drain waits for the output reader of a killed process: its stdout ends
// with the process tree, unless something escaped the tree (trust mode)
// and holds it, which closing our end answers.
func drain(read <-chan error, proc Process) {
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case <-read:
	case <-timer.C:
		_ = proc.Stdout().Close()
		<-read
	}
}
