package lite

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// skillTool is the agent's skill tool, or nil (with a warning) when it
// has no skills to read.
func (f *toolFactory) skillTool(a *agents.Agent) runtime.Tool {
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
func (f *toolFactory) withSkillTool(a *agents.Agent, out []runtime.Tool) []runtime.Tool {
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

// skillMounts are those of the folders of an agent's skills (Skill.Dir)
// that its sandbox shows read-only at the same path, so that the model can
// run a skill's scripts and read its files there (nothing else of the
// agent's folder or the data dir is visible). The loader resolved each
// folder and checked it lies in its skills folder; one that is no longer
// that real folder (a link swapped in since) is left out. Checked before
// each run, as a folder may change while the agent stays loaded. A mount
// is read-only: a skill never widens what the sandbox may write or reach.
func skillMounts(skills []string) []string {
	dirs := make([]string, 0, len(skills))
	for _, d := range skills {
		if real, err := filepath.EvalSymlinks(d); err == nil && real == d {
			dirs = append(dirs, d)
		}
	}
	return dirs
}
