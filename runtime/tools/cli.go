package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// CLI is an agent's own command-line tool: one declared in agent.yaml
// (type: cli) or found in a tools/<name>/ folder. As in Agnx, the model
// passes one string, args, which is appended to the command; unlike Agnx,
// args is split into words shell-style and the command runs without a
// shell, so args never becomes shell code. It runs in the same sandbox as
// bash, with its folder readable and as its working directory.
//
// With JSONInput (agent.yaml input: json, a lite extension) the call's
// arguments go, as a JSON object, to the command's stdin instead.
type CLI struct {
	Name        string
	Description string // as the model reads it
	// Command is the program and its fixed arguments: a host path (bound
	// read-only, so the same path inside) or a bare name found on the
	// sandbox's PATH.
	Command []string
	// Dir is the working directory: the agent's folder for a declared
	// tool, the tool's folder for a discovered one (as the sandbox sees
	// it: a host path bound by ReadOnly, or under /workspace).
	Dir string
	// ReadOnly are the host paths bound read-only: Dir unless it is in
	// the workspace, and an absolute command outside it.
	ReadOnly []string
	// Env is the tool's environment besides the sandbox's minimal one.
	Env       map[string]string
	JSONInput bool
	Sandbox   Sandbox
	Timeout   time.Duration // default DefaultTimeout
}

var (
	_ runtime.Tool      = (*CLI)(nil)
	_ runtime.Deadliner = (*CLI)(nil)
)

const (
	cliArgsSchema = `{"type":"object","properties":{"args":{"type":"string",` +
		`"description":"Command line arguments to pass to the tool"}}}`
	cliJSONSchema = `{"type":"object","description":"Arguments as the tool's description says","additionalProperties":true}`
)

// Spec describes the tool to the model.
func (t *CLI) Spec() runtime.ToolSpec {
	schema := cliArgsSchema
	if t.JSONInput {
		schema = cliJSONSchema
	}
	return runtime.ToolSpec{Name: t.Name, Description: t.Description, Schema: []byte(schema)}
}

// Subject is what policies match: the command line the call runs (its
// args as given), or the JSON arguments with JSONInput.
func (t *CLI) Subject(raw []byte) string {
	if t.JSONInput {
		return string(bytes.TrimSpace(raw))
	}
	return strings.TrimSpace(strings.Join(t.Command, " ") + " " + cliArgs(raw))
}

// cliArgs is the args string of a call. Arguments that are not an object
// with a string args give none: Agnx runs the tool without arguments
// then.
func cliArgs(raw []byte) string {
	var a struct {
		Args string `json:"args"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return ""
	}
	return a.Args
}

// Run runs the command.
func (t *CLI) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	e := Exec{Command: t.Command, Timeout: t.Deadline(nil), Dir: t.Dir,
		ReadOnly: t.ReadOnly, Env: t.Env}
	if t.JSONInput {
		args := bytes.TrimSpace(raw)
		if len(args) == 0 {
			args = []byte("{}")
		}
		e.Stdin = append(args, '\n')
	} else {
		words, err := SplitArgs(cliArgs(raw))
		if err != nil {
			return runtime.ErrorResult("error: " + t.Name + ": " + err.Error()), nil
		}
		e.Command = append(t.Command[:len(t.Command):len(t.Command)], words...)
	}
	res, err := t.Sandbox.Exec(ctx, e)
	if err != nil {
		if ctx.Err() != nil {
			return runtime.Result{}, ctx.Err()
		}
		return runtime.ErrorResult("error: " + t.Name + ": " + err.Error()), nil
	}
	return execResult(res, e.Timeout), nil
}

// Deadline is the longest a call may take: the tool's timeout.
func (t *CLI) Deadline([]byte) time.Duration {
	if t.Timeout <= 0 {
		return DefaultTimeout
	}
	return t.Timeout
}

// Kind is "cli", for metrics.
func (t *CLI) Kind() string { return "cli" }
