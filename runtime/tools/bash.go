package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Exec asks a sandbox to run one command in the agent's workspace.
type Exec struct {
	Command []string
	Stdin   []byte
	Timeout time.Duration
	// ReadOnly are host paths the command may read besides the system and
	// the workspace (a CLI tool's own folder).
	ReadOnly []string
}

// ExecResult is what the command did.
type ExecResult struct {
	Output   []byte // stdout and stderr, interleaved, capped
	Cut      int64  // output bytes dropped
	ExitCode int
	TimedOut bool
	Duration time.Duration
}

// Sandbox runs commands confined to one agent's workspace. lite provides
// one backed by bubblewrap. Its error means the sandbox could not run (and
// says how to fix that); what the command did is in the ExecResult.
type Sandbox interface {
	Exec(ctx context.Context, e Exec) (ExecResult, error)
}

// Bash runs a shell command in the sandbox.
type Bash struct {
	Sandbox Sandbox
	// MaxTimeout caps what the model may ask for; default 600 s.
	MaxTimeout time.Duration
}

var (
	_ runtime.Tool      = (*Bash)(nil)
	_ runtime.Deadliner = (*Bash)(nil)
)

type bashArgs struct {
	Command        string `json:"command"`
	TimeoutSeconds int    `json:"timeout_seconds"`
}

const bashSchema = `{"type":"object","properties":{` +
	`"command":{"type":"string","description":"The shell command (bash) to run in the workspace"},` +
	`"timeout_seconds":{"type":"integer","description":"How long it may run (default 60)"}},` +
	`"required":["command"],"additionalProperties":false}`

// Spec describes bash to the model.
func (t *Bash) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "bash", Schema: []byte(bashSchema),
		Description: "Run a bash command in your workspace, in a sandbox: the workspace is writable, " +
			"the system is read-only, /tmp is private and there may be no network. Returns the output and exit code."}
}

// Subject is what policies match: the command line.
func (t *Bash) Subject(args []byte) string {
	var a bashArgs
	_ = decodeArgs(args, &a)
	return a.Command
}

// Run runs the command.
func (t *Bash) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a bashArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("error: bash: " + err.Error()), nil
	}
	if strings.TrimSpace(a.Command) == "" {
		return runtime.ErrorResult("error: bash: command is required"), nil
	}
	timeout := t.timeout(a)
	res, err := t.Sandbox.Exec(ctx, Exec{Command: []string{"/bin/bash", "-c", a.Command}, Timeout: timeout})
	if err != nil {
		if ctx.Err() != nil {
			return runtime.Result{}, ctx.Err()
		}
		return runtime.ErrorResult("error: bash: " + err.Error()), nil
	}
	return execResult(res, timeout), nil
}

// timeout is how long one command may run: what the model asked for,
// up to MaxTimeout.
func (t *Bash) timeout(a bashArgs) time.Duration {
	timeout := 60 * time.Second
	if a.TimeoutSeconds > 0 {
		timeout = time.Duration(min(a.TimeoutSeconds, 1<<20)) * time.Second
	}
	maxT := t.MaxTimeout
	if maxT <= 0 {
		maxT = 600 * time.Second
	}
	return min(timeout, maxT)
}

// Deadline is the longest a call may take: its command's timeout. The
// loop gives up on a call that outlives it by more than a grace period.
func (t *Bash) Deadline(args []byte) time.Duration {
	var a bashArgs
	_ = decodeArgs(args, &a)
	return t.timeout(a)
}

// execResult is the model's view of a command run, plus details for
// clients.
func execResult(res ExecResult, timeout time.Duration) runtime.Result {
	var b strings.Builder
	b.Write(res.Output)
	note := func(format string, args ...any) {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, format, args...)
	}
	if res.Cut > 0 {
		note("[... %d more bytes of output were cut ...]", res.Cut)
	}
	switch {
	case res.TimedOut:
		note("[timed out after %s: the command and everything it started were killed]", timeout)
	case res.ExitCode != 0:
		note("[exit code %d]", res.ExitCode)
	case b.Len() == 0:
		b.WriteString("(no output)")
	}
	details, _ := json.Marshal(map[string]any{"exit_code": res.ExitCode, "timed_out": res.TimedOut,
		"cut_bytes": res.Cut, "duration_ms": res.Duration.Milliseconds()})
	return runtime.Result{Content: strings.ToValidUTF8(b.String(), "\uFFFD"), Details: details,
		IsError: res.TimedOut || res.ExitCode != 0}
}
