package agents

import (
	"slices"
	"strings"
)

// Call is one tool call as a policy sees it.
type Call struct {
	Tool string // the tool's name
	// Type is bash, builtin, cli, mcp or wasm; empty is worked out from
	// Tool (bash for the tool bash, mcp for mcp:…, else builtin).
	Type string
	// Subject is what the call acts on, for lite's rules: the command
	// line, the path, the URL.
	Subject string
	// Invocation is what the parent's rules match: bash's command line,
	// a builtin's name or name:action, a cli or wasm tool's name, an MCP
	// tool's server:tool. Empty is worked out as Type is.
	Invocation string
}

// fill works out what the call leaves empty.
func (c Call) fill() Call {
	if c.Type == "" {
		switch {
		case c.Tool == shellTool:
			c.Type = "bash"
		case strings.HasPrefix(c.Tool, "mcp:"):
			c.Type = "mcp"
		default:
			c.Type = "builtin"
		}
	}
	if c.Invocation == "" {
		switch c.Type {
		case "bash":
			c.Invocation = c.Subject
		case "mcp":
			c.Invocation = strings.TrimPrefix(c.Tool, "mcp:")
		default:
			c.Invocation = c.Tool
		}
	}
	return c
}

// String is the call as allow_always saves it: type:invocation, with
// the invocation's glob characters escaped so that the rule matches it
// alone.
func (c Call) String() string {
	c = c.fill()
	return c.Type + ":" + EscapeGlob(c.Invocation)
}

// AllowRule is the rule allow_always saves for the call: one that allows
// this call alone (its text glob-escaped, and allow rules are anchored).
// A call with a subject other than a bash line (a path, a URL, a cli
// tool's arguments) gets lite's form, tool:subject: the parent's
// type:invocation, builtin:read_file, would allow every call of the tool
// after the user approved one path. Others get type:invocation, as the
// parent saves them.
func (c Call) AllowRule() string {
	c = c.fill()
	if c.Type != "bash" && c.Subject != "" && !slices.Contains(ToolTypes, c.Tool) && !strings.ContainsAny(c.Tool, ":*?\\ \t") {
		return c.Tool + ":" + EscapeGlob(c.Subject)
	}
	return c.String()
}
