package runtime

import (
	"slices"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Hooks are an agent's tool hooks (spec.hooks) as the loop applies them:
// guards run before a call, steering messages added after one.
//
// They mirror the agent's spec.hooks field for field; the agent cache
// fills LoadedAgent.Hooks from the spec. The defaults of the builtins an
// agent has (DefaultHooks) are added by the loop.
type Hooks struct {
	BeforeTool []BeforeToolHook
	AfterTool  []AfterToolHook
}

// The types of a BeforeToolHook.
const (
	// HookDependsOn refuses a call matching Match unless the conversation
	// holds a call matching Prior (with the same value of the argument
	// MatchArg, when it is set; both missing count as the same).
	HookDependsOn = "depends_on"
	// HookSkipDuplicate refuses a call matching Match when the
	// conversation holds a call of the same tool and action, with the same
	// values of the arguments MatchArgs, that has a result. Without
	// MatchArgs it refuses nothing (as Agnx).
	HookSkipDuplicate = "skip_duplicate"
)

// BeforeToolHook is one entry of spec.hooks.before_tool.
type BeforeToolHook struct {
	Match     string // "tool" or "tool:action", * a glob, anchored
	Type      string // HookDependsOn or HookSkipDuplicate
	Prior     string
	MatchArg  string
	MatchArgs []string
}

// AfterToolHook is one entry of spec.hooks.after_tool: after a
// successful call matching Match, the model gets the user message
// "[steering] <Message>", unless an Unless pair equals the call's
// argument of that name.
type AfterToolHook struct {
	Match   string
	Message string
	Unless  map[string]any
}

// DefaultHooks adds to h the hooks the builtins among tools come with, as
// Agnx's do, unless h has a hook with the same match: memory dedupes its
// recalls by days; background_process wants a capture of a process before
// keys are sent to it, and steers after a capture and after a spawn that
// does not wait.
func DefaultHooks(h Hooks, tools []string) Hooks {
	hasBefore := func(m string) bool {
		return slices.ContainsFunc(h.BeforeTool, func(b BeforeToolHook) bool { return b.Match == m })
	}
	hasAfter := func(m string) bool {
		return slices.ContainsFunc(h.AfterTool, func(a AfterToolHook) bool { return a.Match == m })
	}
	out := Hooks{BeforeTool: slices.Clip(h.BeforeTool), AfterTool: slices.Clip(h.AfterTool)}
	for _, name := range tools {
		switch name {
		case "memory":
			if !hasBefore("memory:recall") {
				out.BeforeTool = append(out.BeforeTool, BeforeToolHook{Match: "memory:recall", Type: HookSkipDuplicate,
					MatchArgs: []string{"days"}})
			}
		case "background_process":
			if !hasBefore("background_process:send_keys") {
				out.BeforeTool = append(out.BeforeTool, BeforeToolHook{Match: "background_process:send_keys",
					Type: HookDependsOn, Prior: "background_process:capture", MatchArg: "handle"})
			}
			if !hasAfter("background_process:capture") {
				out.AfterTool = append(out.AfterTool, AfterToolHook{Match: "background_process:capture",
					Message: "You now have the current screen state. Base your next action on what you see above."})
			}
			if !hasAfter("background_process:spawn") {
				out.AfterTool = append(out.AfterTool, AfterToolHook{Match: "background_process:spawn",
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

// HooksFrom converts an agent's spec.hooks into the runtime's hooks.
func HooksFrom(h agents.Hooks) Hooks {
	var out Hooks
	for _, b := range h.BeforeTool {
		out.BeforeTool = append(out.BeforeTool, BeforeToolHook{Match: b.Match, Type: string(b.Type), Prior: b.Prior, MatchArg: b.MatchArg, MatchArgs: b.MatchArgs})
	}
	for _, a := range h.AfterTool {
		out.AfterTool = append(out.AfterTool, AfterToolHook{Match: a.Match, Message: a.Message, Unless: a.Unless})
	}
	return out
}
