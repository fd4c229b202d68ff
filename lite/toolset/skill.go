package toolset

import (
	"fmt"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// skillTool is the agent's skill tool, or nil (with a warning) when it
// has no skills to read.
func (f *Factory) skillTool(a *agents.Agent) runtime.Tool {
	if len(a.Skills) == 0 {
		a.Warnings = append(a.Warnings, "spec.tools lists the skill tool, but the agent has no skills: it runs without it; "+
			"add skills to "+a.SkillsDir+" or remove skill from spec.tools")
		return nil
	}
	t := &tools.Skill{Skills: make([]tools.SkillDir, 0, len(a.Skills))}
	for _, s := range a.Skills {
		t.Skills = append(t.Skills, tools.SkillDir{Name: s.Name, Dir: s.Dir})
	}
	return t
}

// withSkillTool adds the skill tool to out when the agent has skills and
// no tool of that name yet (listed as a builtin, or one of its own tools
// named so, which then keeps the name, with a warning).
func (f *Factory) withSkillTool(a *agents.Agent, out []runtime.Tool) []runtime.Tool {
	if len(a.Skills) == 0 {
		return out
	}
	for _, t := range out {
		if !strings.EqualFold(t.Spec().Name, "skill") {
			continue
		}
		if _, ok := t.(*tools.Skill); !ok {
			a.Warnings = append(a.Warnings, fmt.Sprintf("the agent has a tool named %q, so the skill tool that reads its skills "+
				"is left out: rename that tool", t.Spec().Name))
		}
		return out
	}
	return append(out, f.skillTool(a))
}
