package runtime

import "context"

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
