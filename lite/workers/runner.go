package workers

import (
	"context"
	"time"
)

// Job is one piece of work for a coding agent.
type Job struct {
	// Dir is the folder the worker works in, mounted read-write in its
	// sandbox; absolute.
	Dir string
	// Prompt is the task, or the supervisor's feedback when Resume is set.
	Prompt string
	// Resume is the worker's own session id to go on with; "" starts a
	// new session.
	Resume string
	// Timeout bounds the whole run; 0 is the runner's default.
	Timeout time.Duration
}

// Outcome is what a run produced.
type Outcome struct {
	// SessionID is the worker's session id, for Job.Resume.
	SessionID string
	// Text is its final message (bounded).
	Text string
	// Stop is why it stopped: end_turn, max_tokens, refusal, cancelled,
	// error, ...
	Stop string
}

// Runner runs a coding agent: over ACP or Claude Code's headless CLI.
// Run streams progress with runtime.Progress and asks permissions with
// runtime.Ask; it kills the worker's whole process tree when ctx ends or
// Timeout passes and returns an error that says so in one sentence.
type Runner interface {
	Run(ctx context.Context, job Job) (Outcome, error)
}
