package runtime

import (
	"context"
	"time"
)

// Tool is something the model can call. Run gets the call's arguments as a
// JSON object and decodes them into its own typed struct.
//
// A failure the model should see (a missing file, a bad argument) is a
// Result with IsError set, not a Go error: the model reads it and tries
// again. A Go error means the runtime itself failed; the loop still turns it
// into an error result so the turn goes on.
type Tool interface {
	Spec() ToolSpec
	Run(ctx context.Context, args []byte) (Result, error)
}

// Result is what a tool call produced. Content is the text the model sees;
// Details is optional structured data (JSON) for clients, never sent to the
// model.
type Result struct {
	Content string
	Details []byte
	IsError bool
}

// ErrorResult is a Result the model reads as a failure.
func ErrorResult(msg string) Result { return Result{Content: msg, IsError: true} }

// Subjecter is a Tool that names what a call acts on (a command line, a
// path, a URL), for policies to match; a tool without it is matched by
// name alone.
type Subjecter interface {
	Subject(args []byte) string
}

// CallInfo tells a tool which call it serves. The loop puts it in the
// context it runs tools with.
type CallInfo struct {
	SessionID string
	Agent     string
	// Gateway and ChatID are where the session's messages come from
	// ("telegram" and the chat's id); empty for a session of the HTTP API
	// or the CLI.
	Gateway string
	ChatID  string
	CallID  string
	Turns   int
	Usage   Usage
	Created time.Time
	Events  uint64
	// Parent is the parent session's id when the call's session is a
	// subagent.
	Parent string
	// Viewer is who the call reads other sessions as: tools that show
	// other sessions show only those Viewer.Sees.
	Viewer Viewer
	// Workspace, when set, is the folder the call's file and shell tools
	// work in instead of the agent's own workspace (a subagent given its
	// parent's); ReadOnly forbids writing to it.
	Workspace string
	ReadOnly  bool

	// What Ask and Progress need: the loop, the turn and the tool.
	loop *Loop
	turn uint64
	tool string
}

type callKey struct{}

// WithCall returns ctx carrying info.
func WithCall(ctx context.Context, info CallInfo) context.Context {
	return context.WithValue(ctx, callKey{}, info)
}

// CallFrom returns the call a tool serves, if ctx carries one.
func CallFrom(ctx context.Context) (CallInfo, bool) {
	info, ok := ctx.Value(callKey{}).(CallInfo)
	return info, ok
}
