package workers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// ToolName is the built-in tool an agent lists to get the workers.
const ToolName = "worker"

// maxToolArgs bounds the arguments read: a task and a feedback at most.
const maxToolArgs = 2*maxTask + 4<<10

// Tool returns the worker tool for an agent whose workspace is ws (a
// call's own workspace, runtime.CallInfo.Workspace, wins).
func (s *Supervisor) Tool(ws string) runtime.Tool { return &tool{s: s, ws: ws} }

type tool struct {
	s  *Supervisor
	ws string
}

var (
	_ runtime.Tool      = (*tool)(nil)
	_ runtime.Deadliner = (*tool)(nil)
	_ runtime.Subjecter = (*tool)(nil)
)

// Args are the worker tool's arguments.
type Args struct {
	Action   string `json:"action"`
	Worker   string `json:"worker,omitempty"`
	Task     string `json:"task,omitempty"`
	Job      string `json:"job,omitempty"`
	Feedback string `json:"feedback,omitempty"`
	// Retry false rejects for good even with retries left.
	Retry *bool `json:"retry,omitempty"`
}

const toolSchema = `{"type":"object","properties":{` +
	`"action":{"type":"string","enum":["run","approve","reject","status","list"],"description":"run: start a worker on a copy of the workspace; approve: apply a reviewed job's changes to the workspace; reject: send feedback and have the worker try again (or discard the job when no retries are left or retry is false); status: one job; list: this agent's jobs"},` +
	`"worker":{"type":"string","description":"(run) the worker's name"},` +
	`"task":{"type":"string","description":"(run) what the worker should do, in full: it sees only the workspace's files"},` +
	`"job":{"type":"string","description":"(approve, reject, status) the job id run gave"},` +
	`"feedback":{"type":"string","description":"(reject) what is wrong and what to do instead"},` +
	`"retry":{"type":"boolean","description":"(reject) false discards the job without another try; default true"}},` +
	`"required":["action"]}`

// Spec describes the tool, naming the workers there are.
func (t *tool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: ToolName,
		Description: "Hand coding work to a coding agent (" + strings.Join(t.s.Names(), ", ") + ") that works on a copy of the workspace. " +
			"run returns its final message and a diff; nothing reaches the workspace until you approve, and you can reject with feedback to have it try again.",
		Schema: []byte(toolSchema)}
}

// ParseArgs decodes and checks the tool's arguments; the error is one
// sentence for the model.
func ParseArgs(raw []byte) (Args, error) {
	var a Args
	if len(raw) > maxToolArgs {
		return a, fmt.Errorf("the arguments are %d bytes, over %d: shorten the task or feedback", len(raw), maxToolArgs)
	}
	if err := json.Unmarshal(bytes.TrimSpace(raw), &a); err != nil {
		return a, fmt.Errorf("the arguments are not a JSON object of the worker tool (%v): send {\"action\": ...}", err)
	}
	switch a.Action {
	case "run":
		if a.Worker == "" || a.Task == "" {
			return a, fmt.Errorf("run needs worker and task")
		}
	case "approve", "status":
		if a.Job == "" {
			return a, fmt.Errorf("%s needs job, the id run gave", a.Action)
		}
	case "reject":
		if a.Job == "" {
			return a, fmt.Errorf("reject needs job and feedback")
		}
	case "list":
	default:
		return a, fmt.Errorf("action %q is not one of run, approve, reject, status, list", clip(a.Action))
	}
	return a, nil
}

// Subject is what a policy matches: the action and the worker or job.
func (t *tool) Subject(raw []byte) string {
	a, err := ParseArgs(raw)
	if err != nil {
		return ""
	}
	if a.Action == "run" {
		return "run " + a.Worker
	}
	return strings.TrimSpace(a.Action + " " + a.Job)
}

// deadlineMargin covers copying, comparing and applying around a run.
const deadlineMargin = 5 * time.Minute

// Deadline lets a run take its worker's timeout, and a reject the
// longest any worker has, plus the margin.
func (t *tool) Deadline(raw []byte) time.Duration {
	a, err := ParseArgs(raw)
	if err != nil {
		return 0
	}
	switch a.Action {
	case "run":
		if e, ok := t.s.o.Entries[a.Worker]; ok {
			return e.RunTimeout + runGrace + deadlineMargin
		}
	case "reject":
		var longest time.Duration
		for _, e := range t.s.o.Entries {
			longest = max(longest, e.RunTimeout)
		}
		return longest + runGrace + deadlineMargin
	case "approve":
		return deadlineMargin
	}
	return 0
}

// Run runs one action.
func (t *tool) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	a, err := ParseArgs(raw)
	if err != nil {
		return runtime.ErrorResult(err.Error()), nil
	}
	info, ok := runtime.CallFrom(ctx)
	if !ok || info.Agent == "" {
		return runtime.ErrorResult("the worker tool runs in an agent's turn only"), nil
	}
	c := caller{Agent: info.Agent, Session: info.SessionID, Gateway: info.Gateway, ChatID: info.ChatID,
		Workspace: t.ws, ReadOnly: info.ReadOnly}
	if info.Workspace != "" {
		c.Workspace = info.Workspace
	}
	switch a.Action {
	case "run":
		return t.s.run(ctx, c, a.Worker, a.Task), nil
	case "approve":
		return t.s.approve(ctx, c, a.Job), nil
	case "reject":
		return t.s.reject(ctx, c, a.Job, a.Feedback, a.Retry == nil || *a.Retry), nil
	case "status":
		return t.s.status(ctx, c, a.Job), nil
	default:
		return t.s.list(ctx, c), nil
	}
}
