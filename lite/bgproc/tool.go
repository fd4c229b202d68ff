package bgproc

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Sandbox is one agent's side of the Manager: whose processes, where
// they run, how they start.
type Sandbox struct {
	Agent string
	// Workspace is the agent's workspace on the host: the logs go there.
	Workspace string
	// WorkDir is where the workspace appears inside the sandbox; default
	// /workspace.
	WorkDir string
	Start   Start
}

// Tool is the background_process tool of one agent.
type Tool struct {
	m  *Manager
	sb Sandbox
}

var (
	_ runtime.Tool        = (*Tool)(nil)
	_ runtime.Subjecter   = (*Tool)(nil)
	_ runtime.CallInvoked = (*Tool)(nil)
	_ runtime.Deadliner   = (*Tool)(nil)
)

// Tool returns the background_process tool of the agent sb describes.
func (m *Manager) Tool(sb Sandbox) *Tool {
	if sb.WorkDir == "" {
		sb.WorkDir = "/workspace"
	}
	return &Tool{m: m, sb: sb}
}

// Bounds of the arguments.
const (
	maxCommand     = 16 << 10
	maxLabel       = 200
	maxInput       = 64 << 10
	maxHandle      = 64   // proc_ and a ULID are 31
	DefaultTimeout = 1800 // seconds, the parent's
	maxTimeout     = 7 * 24 * 3600
	waitTail       = 8 << 10 // bytes of output wait and capture return
	stdinTimeout   = 10 * time.Second
)

type args struct {
	Action          string `json:"action"`
	Command         string `json:"command"`
	Workdir         string `json:"workdir"`
	Wait            bool   `json:"wait"`
	Interactive     bool   `json:"interactive"`
	Label           string `json:"label"`
	TimeoutSeconds  *int   `json:"timeout_seconds"`
	Handle          string `json:"handle"`
	Offset          *int   `json:"offset"`
	Limit           *int   `json:"limit"`
	Keys            string `json:"keys"`
	PressEnter      *bool  `json:"press_enter"`
	Input           string `json:"input"`
	IntervalSeconds *int   `json:"interval_seconds"`
	Pattern         string `json:"pattern"`
}

const actions = "spawn, list, status, log, capture, send_keys, write, kill, watch, unwatch"

// Spec describes the tool to the model.
func (t *Tool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "background_process", Schema: []byte(schema), Description: description}
}

const description = "Manage background processes. Actions: 'spawn' (start a command), 'list' (all processes), " +
	"'status' (check one), 'log' (read output lines), 'capture' (the last output), 'send_keys' (send key names to " +
	"stdin), 'write' (type literal text to stdin), 'kill' (terminate), 'watch' (be told when the process ends or " +
	"prints a line matching 'pattern'), 'unwatch' (stop being told). After spawning, you will receive a completion " +
	"notification when the process finishes — do not poll in a loop. Kill an existing process before spawning a " +
	"replacement. Processes run in your sandbox, in the workspace, with no terminal: stdin is a pipe (spawn with " +
	"interactive: true to keep it open), send_keys maps Enter, Tab, Escape, arrows and C-<letter> to the bytes a " +
	"terminal sends, C-c sends SIGINT to the process and everything it started, C-d closes stdin."

const schema = `{"type":"object","properties":{` +
	`"action":{"type":"string","enum":["spawn","list","status","log","capture","send_keys","write","kill","watch","unwatch"],"description":"Action to perform"},` +
	`"command":{"type":"string","description":"(spawn) Shell command to execute (passed to bash -c)"},` +
	`"workdir":{"type":"string","description":"(spawn) Working directory, relative to the workspace"},` +
	`"wait":{"type":"boolean","description":"(spawn) If true, block until the process completes and return its output. Default: false"},` +
	`"interactive":{"type":"boolean","description":"(spawn) If true, keep stdin open for send_keys and write. Default: false"},` +
	`"label":{"type":"string","description":"(spawn) Human-readable label for this process"},` +
	`"timeout_seconds":{"type":"integer","description":"(spawn) Maximum runtime in seconds before the process is killed. Default: 1800"},` +
	`"handle":{"type":"string","description":"(status/log/capture/send_keys/write/kill/watch/unwatch) Process handle"},` +
	`"offset":{"type":"integer","description":"(log) Line offset (default: 0)"},` +
	`"limit":{"type":"integer","description":"(log) Max lines (default: 100)"},` +
	`"keys":{"type":"string","description":"(send_keys) Space-separated key names (e.g., 'Down Enter', 'C-c')"},` +
	`"press_enter":{"type":"boolean","description":"(send_keys) If true, press Enter after sending keys. Default: true"},` +
	`"input":{"type":"string","description":"(write) Literal text to write to the process's stdin. Append '\\n' to press Enter."},` +
	`"interval_seconds":{"type":"integer","description":"(watch) Accepted for compatibility; notices come when they happen. Default: 5"},` +
	`"pattern":{"type":"string","description":"(watch) A Go regular expression: be told once when an output line matches"}},` +
	`"required":["action"]}`

// Subject is what a call acts on: spawn's command line, else the handle.
func (t *Tool) Subject(raw []byte) string {
	var a args
	_ = json.Unmarshal(raw, &a)
	if a.Action == "spawn" {
		return a.Command
	}
	return a.Handle
}

// CallInvocation makes policies match spawn as the bash command it runs;
// the other actions are builtin background_process:<action>.
func (t *Tool) CallInvocation(raw []byte) (kind, invocation string, ok bool) {
	var a args
	if json.Unmarshal(raw, &a) != nil || a.Action != "spawn" || a.Command == "" {
		return "", "", false
	}
	return "bash", a.Command, true
}

// Deadline is how long a call may take: a waited spawn its timeout, the
// others a sandbox's start (30 s at most) or a kill's grace, and then
// some.
func (t *Tool) Deadline(raw []byte) time.Duration {
	var a args
	_ = json.Unmarshal(raw, &a)
	if a.Action == "spawn" && a.Wait {
		return timeoutOf(a) + t.m.o.Grace + time.Minute
	}
	return t.m.o.Grace + time.Minute
}

func timeoutOf(a args) time.Duration {
	s := DefaultTimeout
	if a.TimeoutSeconds != nil && *a.TimeoutSeconds > 0 {
		s = min(*a.TimeoutSeconds, maxTimeout)
	}
	return time.Duration(s) * time.Second
}

func fail(format string, v ...any) runtime.Result {
	return runtime.ErrorResult(fmt.Sprintf(format, v...))
}

// Run performs one action.
func (t *Tool) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a args
	if err := json.Unmarshal(raw, &a); err != nil {
		return fail("Tool execution failed: failed to parse tool arguments: %v", err), nil
	}
	call, _ := runtime.CallFrom(ctx)
	switch a.Action {
	case "spawn":
		return t.spawn(ctx, call, a)
	case "list":
		return t.list(call)
	case "status", "log", "capture", "send_keys", "write", "kill", "watch", "unwatch":
	default:
		return fail("Unknown action: '%s'. Use: %s", oneLine(a.Action, 40), actions), nil
	}
	if a.Handle == "" {
		return fail("'handle' is required for %s action", a.Action), nil
	}
	var rec Record
	var found bool
	var err error
	if len(a.Handle) <= maxHandle {
		rec, found, err = t.m.lookup(ctx, a.Handle)
	}
	switch {
	case err != nil:
		return runtime.Result{}, err
	case len(a.Handle) > maxHandle:
		return fail("process not found: %s", oneLine(a.Handle, 40)), nil
	case !found || rec.Agent != t.sb.Agent:
		return fail("process not found: %s", oneLine(a.Handle, 80)), nil
	case rec.Session != call.SessionID:
		return fail("process belongs to a different session"), nil
	}
	return t.act(ctx, rec, a)
}

func (t *Tool) act(ctx context.Context, rec Record, a args) (runtime.Result, error) {
	switch a.Action {
	case "status":
		return t.status(rec), nil
	case "log":
		return t.log(rec, a), nil
	case "capture":
		out, err := readTail(rec.Workspace, rec.Log, waitTail)
		if err != nil {
			return fail("%v", err), nil
		}
		return runtime.Result{Content: out}, nil
	case "kill":
		return t.kill(ctx, rec), nil
	}
	p := t.m.live(rec.Handle)
	if p == nil {
		return fail("process is not running"), nil
	}
	switch a.Action {
	case "send_keys":
		pe := a.PressEnter == nil || *a.PressEnter
		return t.sendKeys(p, a.Keys, pe), nil
	case "write":
		return t.write(p, a.Input), nil
	case "watch":
		var re *regexp.Regexp
		if a.Pattern != "" {
			c, err := compilePattern(a.Pattern)
			if err != nil {
				return fail("%v", err), nil
			}
			re = c
		}
		t.m.watch(p, re)
		msg := "Watching " + rec.Handle + ": you will be told when it ends"
		if re != nil {
			msg += fmt.Sprintf(", and once when a line matches %q", a.Pattern)
		}
		return runtime.Result{Content: msg}, nil
	default: // unwatch
		t.m.unwatch(p)
		return runtime.Result{Content: "Stopped watching " + rec.Handle}, nil
	}
}
