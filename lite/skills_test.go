package lite

import (
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// skillMD is a valid SKILL.md.
func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\nRun scripts/run.sh.\n"
}

// writeShared writes files under the data dir's skills folder.
func writeShared(t *testing.T, cfg *config.Config, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(cfg.DataDir, agents.SkillsFolder)
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o755))
	}
	return dir
}

func toolCount(a *runtime.LoadedAgent, name string) int {
	n := 0
	for _, t := range a.Tools {
		if t.Spec().Name == name {
			n++
		}
	}
	return n
}

// An agent gets the data dir's skills after its own (its own wins), and
// the skill tool once, whether it lists it or not; a shared skill's edit
// reloads it.
func TestSkills_SharedAndTheSkillTool(t *testing.T) {
	c, cfg := newTestCache(t)
	defer c.Close()
	shared := writeShared(t, cfg, map[string]string{
		"both/SKILL.md":   skillMD("both", "Shared version"),
		"common/SKILL.md": skillMD("common", "Shared skill"),
		"broken/SKILL.md": "---\nname: broken\n",
	})
	dir := filepath.Join(cfg.AgentsDir, "assistant")
	for name, text := range map[string]string{"both": skillMD("both", "Own version")} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "skills", name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "skills", name, "SKILL.md"), []byte(text), 0o644))
	}
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	require.Len(t, a.Spec.Skills, 2)
	assert.Equal(t, "Own version", a.Spec.Skills[0].Description)
	assert.Equal(t, "common", a.Spec.Skills[1].Name)
	assert.True(t, a.Spec.Skills[1].Shared)
	assert.Contains(t, strings.Join(a.Spec.Warnings, "\n"), filepath.Join(shared, "broken", "SKILL.md")+":1: skill skipped: the front matter has no closing --- line")
	system := a.Spec.RenderSystem(time.Now())
	assert.Contains(t, system, "<available_skills>\n  <skill>\n    <name>both</name>\n    <description>Own version</description>\n"+
		"    <location>"+filepath.Join(dir, "skills", "both", "SKILL.md")+"</location>\n  </skill>\n")
	assert.Contains(t, system, "<location>"+filepath.Join(shared, "common", "SKILL.md")+"</location>")
	assert.Equal(t, 1, toolCount(a, "skill"), "an agent with skills gets the skill tool")
	res := call(t, a, "skill", `{"name":"common"}`)
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "description: Shared skill")

	common := filepath.Join(shared, "common", "SKILL.md")
	cachetest.Edit(t, common, func(string) string { return skillMD("common", "Edited") })
	b, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.NotSame(t, a, b, "a shared skill's edit reloads the agent")
	assert.Equal(t, "Edited", b.Spec.Skills[1].Description)

	// a new shared skill is seen too
	later := writeShared(t, cfg, map[string]string{"fresh/SKILL.md": skillMD("fresh", "New")})
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(later, future, future))
	d, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Len(t, d.Spec.Skills, 3)
}

func TestSkills_ToolListedOrTaken(t *testing.T) {
	files := map[string]string{"skills/notes/SKILL.md": skillMD("notes", "Notes")}
	a := toolAgent(t, "trust", "    - {type: builtin, name: skill}\n    - {type: builtin, name: read_file}\n", files)
	assert.Equal(t, 1, toolCount(a, "skill"), "listed and automatic: never twice")

	a = toolAgent(t, "trust", "    - {type: builtin, name: Skill}\n", nil)
	assert.Equal(t, 0, toolCount(a, "skill"))
	assert.Contains(t, strings.Join(a.Spec.Warnings, "\n"), "spec.tools lists the skill tool, but the agent has no skills")

	files["skill.sh"] = "#!/bin/sh\necho mine\n"
	a = toolAgent(t, "trust", "    - {type: cli, name: skill, command: ./skill.sh}\n", files)
	require.Equal(t, 1, toolCount(a, "skill"))
	for _, tool := range a.Tools {
		if tool.Spec().Name == "skill" {
			assert.IsType(t, &tools.CLI{}, tool, "the agent's own tool keeps the name")
		}
	}
	assert.Contains(t, strings.Join(a.Spec.Warnings, "\n"), `the agent has a tool named "skill", so the skill tool that reads its skills is left out`)
}

// A skill's script runs in the real sandbox: it reads its own folder and
// the shared skills' folders at the paths <location> gives, and nothing
// else of the agent's folder or the data dir; it writes none of them.
func TestSandbox_SkillScripts(t *testing.T) {
	needSandbox(t)
	script := "#!/bin/bash\ncd \"$(dirname \"$0\")\"/.. && head -2 SKILL.md && echo ran in $PWD\n"
	files := map[string]string{
		"skills/report/SKILL.md":         skillMD("report", "Write reports"),
		"skills/report/scripts/run.sh":   script,
		"skills/report/data/template.md": "TEMPLATE\n",
		"tools/probe/run":                "#!/bin/bash\ncat \"$1\"\n",
	}
	c, cfg, _ := toolAgentCache(t, "bwrap", "    - {type: builtin, name: bash}\n", files)
	defer c.Close()
	writeShared(t, cfg, map[string]string{"common/SKILL.md": skillMD("common", "Shared"), "common/run.sh": "#!/bin/sh\necho shared ran\n"})
	a, err := c.LoadAgent("assistant") // again, with the shared skill
	require.NoError(t, err)
	require.Len(t, a.Spec.Skills, 2)
	own, common := a.Spec.Skills[0].Dir, a.Spec.Skills[1].Dir
	agentDir := filepath.Join(cfg.AgentsDir, "assistant")

	res := call(t, a, "bash", `{"command":"bash `+own+`/scripts/run.sh && cat `+own+`/data/template.md && sh `+common+`/run.sh"}`)
	assert.False(t, res.IsError, res.Content)
	assert.Equal(t, "---\nname: report\nran in "+own+"\nTEMPLATE\nshared ran\n", res.Content)

	for cmd, why := range map[string]string{
		"cat " + filepath.Join(agentDir, agents.FileName): "the agent's agent.yaml",
		"cat " + filepath.Join(cfg.DataDir, "agnx.yaml"):  "the data dir's config",
		"ls " + filepath.Join(agentDir, "tools"):          "the rest of the agent's folder",
		"touch " + own + "/new && echo wrote":             "a write to the skill's folder",
		"echo x >> " + own + "/SKILL.md && echo wrote":    "a change to SKILL.md",
		"touch " + common + "/new && echo wrote":          "a write to a shared skill",
	} {
		res := call(t, a, "bash", `{"command":"`+cmd+`"}`)
		assert.True(t, res.IsError, "%s is reachable: %s", why, res.Content)
		assert.NotContains(t, res.Content, "wrote", why)
		assert.NotContains(t, res.Content, "apiVersion", why)
	}
	res = call(t, a, "bash", `{"command":"ls -A `+cfg.DataDir+` `+agentDir+`"}`)
	assert.Equal(t, cfg.DataDir+":\nagents\nskills\n\n"+agentDir+":\nskills\n", res.Content,
		"of the data dir, only the paths to the skills are there")
	_, err = os.Stat(filepath.Join(own, "new"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	// a discovered CLI tool's sandbox shows the skills too
	res = call(t, a, "probe", `{"args":"`+filepath.Join(common, "SKILL.md")+`"}`)
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "name: common")
}
