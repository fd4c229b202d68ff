package tools

import (
	"bytes"
	"context"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// CLI is an agent's own command-line tool (type: cli in agent.yaml): an
// executable that gets the call's arguments as JSON on stdin and answers
// on stdout. It runs in the same sandbox as bash, with its folder readable.
type CLI struct {
	Name        string
	Description string // the agent.yaml description and the README
	Command     string // absolute host path of the executable
	Dir         string // its folder, bound read-only
	Sandbox     Sandbox
	Timeout     time.Duration // default 60 s
}

var (
	_ runtime.Tool      = (*CLI)(nil)
	_ runtime.Deadliner = (*CLI)(nil)
)

const cliSchema = `{"type":"object","description":"Arguments as the tool's description says","additionalProperties":true}`

// Spec describes the tool to the model.
func (t *CLI) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: t.Name, Description: t.Description, Schema: []byte(cliSchema)}
}

// Subject is what policies match: the arguments as given.
func (t *CLI) Subject(args []byte) string { return string(bytes.TrimSpace(args)) }

// Run runs the executable with the arguments on stdin.
func (t *CLI) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	args := bytes.TrimSpace(raw)
	if len(args) == 0 {
		args = []byte("{}")
	}
	timeout := t.Deadline(nil)
	res, err := t.Sandbox.Exec(ctx, Exec{Command: []string{t.Command}, Stdin: append(args, '\n'),
		Timeout: timeout, ReadOnly: []string{t.Dir}})
	if err != nil {
		if ctx.Err() != nil {
			return runtime.Result{}, ctx.Err()
		}
		return runtime.ErrorResult("error: " + t.Name + ": " + err.Error()), nil
	}
	return execResult(res, timeout), nil
}

// Deadline is the longest a call may take: the tool's timeout.
func (t *CLI) Deadline([]byte) time.Duration {
	if t.Timeout <= 0 {
		return 60 * time.Second
	}
	return t.Timeout
}

// Kind is "cli", for metrics.
func (t *CLI) Kind() string { return "cli" }
