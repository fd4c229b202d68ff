package runtime

import (
	"slices"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Hooks are an agent's tool hooks (agents.Hooks, spec.hooks) as the loop
// applies them: guards run before a call, steering messages are added
// after one. The defaults of the builtins an agent has (DefaultHooks) are
// added by the loop.
type Hooks = agents.Hooks

// DefaultHooks adds to h the hooks the builtins among tools come with, as
// Agnx's do, unless h has a hook with the same match: memory dedupes its
// recalls by days (Agnx's key) and by query and limit (lite's, so that
// searches for different things are not duplicates); background_process wants a capture of a process before
// keys are sent to it, and steers after a capture and after a spawn that
// does not wait.
func DefaultHooks(h Hooks, tools []string) Hooks {
	hasBefore := func(m string) bool {
		return slices.ContainsFunc(h.BeforeTool, func(b agents.BeforeToolHook) bool { return b.Match == m })
	}
	hasAfter := func(m string) bool {
		return slices.ContainsFunc(h.AfterTool, func(a agents.AfterToolHook) bool { return a.Match == m })
	}
	out := Hooks{BeforeTool: slices.Clip(h.BeforeTool), AfterTool: slices.Clip(h.AfterTool)}
	for _, name := range tools {
		switch name {
		case "memory":
			if !hasBefore("memory:recall") {
				out.BeforeTool = append(out.BeforeTool, agents.BeforeToolHook{Match: "memory:recall", Type: agents.HookSkipDuplicate,
					MatchArgs: []string{"days", "query", "limit"}})
			}
		case "background_process":
			if !hasBefore("background_process:send_keys") {
				out.BeforeTool = append(out.BeforeTool, agents.BeforeToolHook{Match: "background_process:send_keys",
					Type: agents.HookDependsOn, Prior: "background_process:capture", MatchArg: "handle"})
			}
			if !hasAfter("background_process:capture") {
				out.AfterTool = append(out.AfterTool, agents.AfterToolHook{Match: "background_process:capture",
					Message: "You now have the current screen state. Base your next action on what you see above."})
			}
			if !hasAfter("background_process:spawn") {
				out.AfterTool = append(out.AfterTool, agents.AfterToolHook{Match: "background_process:spawn",
					Message: "Remember to start a watcher for this process if you need to monitor it.",
					Unless:  map[string]any{"wait": true}})
			}
		}
	}
	return out
}

// hookMatch matches a hook pattern against an invocation (tool or
// tool:action): without a *, equal; with *s, a glob anchored at both ends.
func hookMatch(pattern, inv string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == inv
	}
	// Only * is special in hook patterns.
	escaped := strings.NewReplacer(`\`, `\\`, `?`, `\?`).Replace(pattern)
	return agents.Wildcard(escaped, inv)
}
