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
	// Dir is where the command starts, one of ReadOnly or under one;
	// empty: the workspace.
	Dir string
	// Env is added to the sandbox's minimal environment.
	Env map[string]string
}

// ExecResult is what the command did.
type ExecResult struct {
	Output   []byte // stdout, capped
	Stderr   []byte // stderr, capped
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

// Bash runs a shell command in the sandbox, as Agnx's bash tool does
// (bash -c, 120 s), in the workspace.
type Bash struct {
	Sandbox Sandbox
	// MaxTimeout caps what the model may ask for; default 600 s.
	MaxTimeout time.Duration
}

// DefaultTimeout is how long bash and CLI tools may run unless told
// otherwise: Agnx's 120 s.
const DefaultTimeout = 120 * time.Second

// MaxBashTimeout is the longest a bash call may ask for, unless its tool
// entry's timeout_seconds (Bash.MaxTimeout) sets another cap.
const MaxBashTimeout = 600 * time.Second

// MaxOutput is where the output a model reads of a command is cut:
// Agnx's 256 KiB.
const MaxOutput = 256 << 10

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
	`"timeout_seconds":{"type":"integer","description":"How long it may run (default 120)"}},` +
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
		return runtime.ErrorResult("Tool execution failed: " + err.Error()), nil
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
	timeout := DefaultTimeout
	if a.TimeoutSeconds > 0 {
		timeout = time.Duration(min(a.TimeoutSeconds, 1<<20)) * time.Second
	}
	maxT := t.MaxTimeout
	if maxT <= 0 {
		maxT = MaxBashTimeout
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

// execResult is the model's view of a command run, as Agnx words it:
// stdout, then "\n--- stderr ---\n" and stderr when there is any, or
// "Command completed with exit code N" when there is no output at all;
// cut at MaxOutput. Then lite's notes (cut, timed out, exit code).
func execResult(res ExecResult, timeout time.Duration) runtime.Result {
	var b strings.Builder
	b.Write(res.Output)
	if len(res.Stderr) > 0 {
		b.WriteString("\n--- stderr ---\n")
		b.Write(res.Stderr)
	}
	cut := res.Cut
	text := b.String()
	if len(text) > MaxOutput {
		cut += int64(len(text) - MaxOutput)
		text = text[:MaxOutput]
	}
	b.Reset()
	b.WriteString(text)
	note := func(format string, args ...any) {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, format, args...)
	}
	switch {
	case b.Len() == 0 && !res.TimedOut && cut == 0:
		fmt.Fprintf(&b, "Command completed with exit code %d", res.ExitCode)
	default:
		if cut > 0 {
			note("[... %d more bytes of output were cut ...]", cut)
		}
		if res.TimedOut {
			note("[timed out after %s: the command and everything it started were killed]", timeout)
		} else if res.ExitCode != 0 {
			note("[exit code %d]", res.ExitCode)
		}
	}
	details, _ := json.Marshal(map[string]any{"exit_code": res.ExitCode, "timed_out": res.TimedOut,
		"cut_bytes": cut, "duration_ms": res.Duration.Milliseconds()})
	return runtime.Result{Content: strings.ToValidUTF8(b.String(), "\uFFFD"), Details: details,
		IsError: res.TimedOut || res.ExitCode != 0}
}
