package agents

import (
	"strconv"
	"strings"
)

// Hooks is spec.hooks: guards that run before a tool call and steering
// messages added after one. Load parses and validates them; the runtime
// applies them. Match patterns are "tool" or "tool:action", where "*" is a
// glob and the pattern is anchored at both ends ("web:*", "bash").
type Hooks struct {
	// BeforeTool are guards that may refuse a call; a refused call becomes
	// a failed tool result that says why.
	BeforeTool []BeforeToolHook `yaml:"before_tool"`
	// AfterTool add a steering message for the model after a successful
	// call.
	AfterTool []AfterToolHook `yaml:"after_tool"`
}

// BeforeToolType is the kind of guard a BeforeToolHook applies.
type BeforeToolType string

// The values of spec.hooks.before_tool[].type.
const (
	// HookDependsOn refuses a call matching Match unless an earlier call
	// in the session matched Prior (with the same value of the argument
	// MatchArg, when it is set).
	HookDependsOn BeforeToolType = "depends_on"
	// HookSkipDuplicate refuses a call matching Match that repeats an
	// earlier one with a result: same tool and action, and the same values
	// of the arguments MatchArgs. Without MatchArgs it refuses nothing (as
	// Agnx).
	HookSkipDuplicate BeforeToolType = "skip_duplicate"
)

// BeforeToolHook is one entry of spec.hooks.before_tool. A refused call
// becomes a failed tool result that says why.
type BeforeToolHook struct {
	// Match is the tool pattern the guard applies to (required).
	Match string `yaml:"match"`
	// Type is depends_on (refuse a call unless an earlier one matched
	// Prior) or skip_duplicate (refuse a call that repeats an earlier one
	// with a result).
	Type BeforeToolType `yaml:"type"`
	// Prior is, for depends_on, the "tool:action" pattern that must have
	// been called before (required for depends_on).
	Prior string `yaml:"prior"`
	// MatchArg is, for depends_on, the argument whose value must be the
	// same in both calls; empty means any earlier Prior call counts.
	MatchArg string `yaml:"match_arg"`
	// MatchArgs are, for skip_duplicate, the arguments that make two calls
	// the same; empty means the hook refuses nothing.
	MatchArgs []string `yaml:"match_args"`
}

// AfterToolHook is one entry of spec.hooks.after_tool: after a successful
// call matching Match, Message goes to the model as a user message
// "[steering] <Message>", unless one of the Unless pairs equals an
// argument of the call.
type AfterToolHook struct {
	// Match is the tool pattern (required); Message the note the model
	// gets, as a user message "[steering] <message>".
	Match   string `yaml:"match"`
	Message string `yaml:"message"`
	// Unless maps an argument name to a value (a string, number, bool or
	// nil as YAML decodes it); any pair equal to the call's argument
	// suppresses the message.
	Unless map[string]any `yaml:"unless"`
}

// Empty reports whether h has no hooks.
func (h *Hooks) Empty() bool { return len(h.BeforeTool) == 0 && len(h.AfterTool) == 0 }

// maxHooks bounds each list of spec.hooks.
const maxHooks = 64

// validateHooks checks spec.hooks. A hook missing match or with an unknown
// type is an error (Agnx refuses such a file too); a depends_on hook
// without prior can never allow or refuse anything meaningful, so it is
// dropped with a warning.
func validateHooks(doc *Doc, h *Hooks) (warnings []string, err error) {
	const p = "spec.hooks."
	if len(h.BeforeTool) > maxHooks || len(h.AfterTool) > maxHooks {
		return nil, doc.Errorf("spec.hooks", "spec.hooks has more than %d before_tool or after_tool entries; keep the ones you need", maxHooks)
	}
	kept := h.BeforeTool[:0]
	for i, b := range h.BeforeTool {
		path := p + "before_tool[" + strconv.Itoa(i) + "]"
		if strings.TrimSpace(b.Match) == "" {
			return nil, doc.Errorf(path, "%s.match is required (a tool name or tool:action, * allowed)", path)
		}
		if b.Type == "" {
			return nil, doc.Errorf(path, "%s.type is required (depends_on or skip_duplicate)", path)
		}
		if err := oneOf(doc, path+".type", string(b.Type), string(HookDependsOn), string(HookSkipDuplicate)); err != nil {
			return nil, err
		}
		if b.Type == HookDependsOn && strings.TrimSpace(b.Prior) == "" {
			warnings = append(warnings, doc.Errorf(path, "%s is depends_on without prior, so it is ignored; add prior: tool:action", path).Error())
			continue
		}
		kept = append(kept, b)
	}
	h.BeforeTool = kept
	for i, a := range h.AfterTool {
		path := p + "after_tool[" + strconv.Itoa(i) + "]"
		switch {
		case strings.TrimSpace(a.Match) == "":
			return nil, doc.Errorf(path, "%s.match is required (a tool name or tool:action, * allowed)", path)
		case strings.TrimSpace(a.Message) == "":
			return nil, doc.Errorf(path, "%s.message is required (the text the model gets after the call)", path)
		}
	}
	return warnings, nil
}
