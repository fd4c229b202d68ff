package tools

import (
	"context"
	"fmt"
	"os"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// WorkspaceFor is the folder a call's file and shell tools work in, given
// ws, the agent's own workspace: the call's override when it has one (a
// subagent working in its parent's workspace), else ws. readOnly says the
// call must not write there. It is the one place tools read the override,
// so every tool sees the same folder for the same call.
//
// ReadOnly is honoured even without an override folder: a call marked
// read-only stays read-only wherever it works.
func WorkspaceFor(ctx context.Context, ws string) (dir string, readOnly bool) {
	c, ok := runtime.CallFrom(ctx)
	if !ok {
		return ws, false
	}
	if c.Workspace != "" {
		ws = c.Workspace
	}
	return ws, c.ReadOnly
}

// ReadOnlyRefusal is what a writing tool answers a read-only call with.
const ReadOnlyRefusal = "error: this subagent works in its parent's workspace read-only: write your results in your answer instead"

// openWorkspace opens the folder a call works in (WorkspaceFor). A tool
// that writes passes write: a read-only call then gets no root but the
// refusal to answer with. Callers return (refused, err) when root is nil.
func openWorkspace(ctx context.Context, ws string, write bool) (root *os.Root, refused runtime.Result, err error) {
	dir, readOnly := WorkspaceFor(ctx, ws)
	if write && readOnly {
		return nil, runtime.ErrorResult(ReadOnlyRefusal), nil
	}
	root, err = os.OpenRoot(dir)
	if err != nil {
		return nil, runtime.Result{}, fmt.Errorf("open workspace: %w", err)
	}
	return root, runtime.Result{}, nil
}
