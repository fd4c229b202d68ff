package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Session tells the model about the conversation it is in.
type Session struct{}

var _ runtime.Tool = Session{}

// Spec describes session to the model.
func (Session) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "session", Description: "Facts about this conversation: its id, your agent name, when it started, how many turns and tokens so far, and the time now.",
		Schema: []byte(`{"type":"object","properties":{},"additionalProperties":false}`)}
}

// Run reports the facts.
func (Session) Run(ctx context.Context, _ []byte) (runtime.Result, error) {
	info, ok := runtime.CallFrom(ctx)
	if !ok {
		return runtime.ErrorResult("error: session: no session information is available"), nil
	}
	now := time.Now()
	return runtime.Result{Content: fmt.Sprintf(
		"session: %s\nagent: %s\nstarted: %s\nturns so far: %d\nevents: %d\ntokens: %d in, %d out\nnow: %s",
		info.SessionID, info.Agent, info.Created.Local().Format(time.RFC1123), info.Turns, info.Events,
		info.Usage.PromptTokens, info.Usage.CompletionTokens, now.Format(time.RFC1123))}, nil
}
