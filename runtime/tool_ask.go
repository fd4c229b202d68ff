package runtime

import (
	"context"
	"errors"
)

// Question is what a running tool call asks permission for (a coding
// worker's request to run a command or write a file): the call as a
// policy sees it, a tool name and what it acts on.
type Question struct {
	Tool    string
	Subject string
}

// Ask asks, from inside a running tool call, whether something the call
// wants to do may happen. The session agent's policy decides first, as
// for a call of q.Tool acting on q.Subject: Allow answers AllowOnce and
// Deny DenyCall at once. Only what the policy would ask about goes to a
// person: an approval_required event whose CallID is the running call's
// id followed by "." and a number, answered like any approval
// (Loop.Approve). The turn gives its slot back while it waits. It
// returns AllowOnce, AllowAlways or DenyCall, or an error when ctx ends
// or ctx is not a tool call's.
func Ask(ctx context.Context, q Question) (string, error) {
	return "", errors.New("asking from inside a tool call is not available yet")
}

// Progress tells the live followers of the call's session what a long
// call is doing, with an ephemeral tool_progress event; it is never
// stored. Callers coalesce: a few a second at most.
func Progress(ctx context.Context, text string) {}
