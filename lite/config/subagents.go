package config

import "github.com/agnx-lite/agnx-lite/runtime"

// Subagents bounds what the agent tool lets one session delegate
// (an agnx-lite extension). Zero values mean the defaults.
type Subagents struct {
	// MaxDepth is how deep subagents nest (default 2: a child may have
	// children of its own, they may not).
	MaxDepth int `yaml:"max_depth"`
	// MaxChildren is how many children one session may spawn (default 16).
	MaxChildren int `yaml:"max_children"`
	// MaxTokens is how many tokens the children of one session may use
	// together (default 1000000).
	MaxTokens int `yaml:"max_tokens"`
}

// Bounds of the subagents section.
const (
	maxSubagentDepth    = 8
	maxSubagentChildren = 1000
)

func (c *Config) validateSubagents() error {
	s := c.Subagents
	switch {
	case s.MaxDepth < 0 || s.MaxDepth > maxSubagentDepth:
		return c.errorf("subagents.max_depth", "subagents.max_depth %d is out of range 0..%d (0: the default, 2)", s.MaxDepth, maxSubagentDepth)
	case s.MaxChildren < 0 || s.MaxChildren > maxSubagentChildren:
		return c.errorf("subagents.max_children", "subagents.max_children %d is out of range 0..%d (0: the default, 16)", s.MaxChildren, maxSubagentChildren)
	case s.MaxTokens < 0:
		return c.errorf("subagents.max_tokens", "subagents.max_tokens %d must not be negative (0: the default, 1000000)", s.MaxTokens)
	}
	return nil
}

// SubagentLimits are the loop's limits from the subagents section.
func (c *Config) SubagentLimits() runtime.SubagentLimits {
	return runtime.SubagentLimits{MaxDepth: c.Subagents.MaxDepth, MaxChildren: c.Subagents.MaxChildren, MaxTokens: c.Subagents.MaxTokens}
}
