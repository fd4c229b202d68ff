package runtime

import "time"

// Observer is told what the loop does, for metrics. Its methods are
// called from the loop and its workers, concurrently; they must be quick
// and must not block.
type Observer interface {
	// TurnEnded reports a turn's outcome (completed, failed, ...), its
	// length and its tokens.
	TurnEnded(agent, outcome string, d time.Duration, u Usage)
	// ToolCalled reports one tool call: the tool's kind (builtin, cli,
	// wasm, ...), whether it succeeded, and how long it ran.
	ToolCalled(agent, tool, kind string, ok bool, d time.Duration)
	// ModelCalled reports one model call and its error, if any.
	ModelCalled(agent, provider string, d time.Duration, err error)
}

// Kinded is a Tool that names its kind for metrics; others count as
// builtin.
type Kinded interface{ Kind() string }

// Invoked is a Tool whose calls policies match by another name than the
// tool's: an MCP tool the model calls github__create_issue is matched as
// mcp:github:create_issue.
type Invoked interface{ Invocation() string }

// CallInvoked is a Tool some of whose calls policies match as another
// tool type: background_process spawn runs a shell command and is
// matched as bash:<command>. ok false leaves the call to the usual rules
// (builtin:name:action).
type CallInvoked interface {
	CallInvocation(args []byte) (kind, invocation string, ok bool)
}

// Named is a Provider that names itself ("ollama", "openai", ...).
type Named interface{ Name() string }

func toolKind(t Tool) string {
	if k, ok := t.(Kinded); ok {
		return k.Kind()
	}
	return "builtin"
}

func providerName(p Provider) string {
	if n, ok := p.(Named); ok {
		return n.Name()
	}
	return "unknown"
}
