package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeSkills writes files under dir.
func writeSkills(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func skillDoc(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\nBody.\n"
}

func TestCLI_SkillList(t *testing.T) {
	c := newCLI(t)
	code, _, _ := c.run("init")
	require.Equal(t, 0, code)
	code, out, _ := c.run("skill", "list")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "no skills: add folders holding a SKILL.md")

	code, _, _ = c.run("agent", "create", "helper")
	require.Equal(t, 0, code)
	writeSkills(t, filepath.Join(c.dir, "agents", "assistant", "skills"), map[string]string{
		"notes/SKILL.md":  skillDoc("notes", `"Take notes\n\tin a file"`),
		"common/SKILL.md": skillDoc("common", "The assistant's own version"),
	})
	writeSkills(t, filepath.Join(c.dir, "skills"), map[string]string{
		"common/SKILL.md": skillDoc("common", strings.Repeat("Long shared description. ", 10)),
	})

	code, out, errs := c.run("skill", "list")
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	assert.Regexp(t, `^AGENT\s+NAME\s+SOURCE\s+DESCRIPTION$`, lines[0])
	assert.Regexp(t, `^assistant\s+common\s+agent\s+The assistant's own version$`, lines[1])
	assert.Regexp(t, `^assistant\s+notes\s+agent\s+Take notes in a file$`, lines[2])
	assert.Regexp(t, `^\(all\)\s+common\s+shared\s+Long shared description\. .{30,}\.\.\.$`, lines[3])

	code, out, _ = c.run("skill", "list", "helper")
	require.Equal(t, 0, code)
	assert.Regexp(t, `^NAME\s+SOURCE\s+DESCRIPTION\ncommon\s+shared\s+Long shared`, out, "an agent gets the shared skills")
	code, out, _ = c.run("skill", "list", "assistant")
	require.Equal(t, 0, code)
	assert.Regexp(t, `common\s+agent\s+The assistant's own version\nnotes\s+agent`, out, "its own wins")
	assert.NotContains(t, out, "shared")

	code, _, errs = c.run("skill", "list", "nobody")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `no agent "nobody"`)
	code, _, errs = c.run("skill")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "usage: agnx-lite skill list [AGENT] | validate [AGENT|PATH]")
}

func TestCLI_SkillValidate(t *testing.T) {
	c := newCLI(t)
	code, _, _ := c.run("init")
	require.Equal(t, 0, code)
	own := filepath.Join(c.dir, "agents", "assistant", "skills")
	shared := filepath.Join(c.dir, "skills")
	writeSkills(t, own, map[string]string{"notes/SKILL.md": skillDoc("notes", "Take notes")})
	writeSkills(t, shared, map[string]string{"common/SKILL.md": skillDoc("common", "Shared")})

	code, out, errs := c.run("skill", "validate")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "2 skills valid\n", out)

	writeSkills(t, own, map[string]string{
		"bad-name/SKILL.md": "# Bad\n\n---\nname: Bad_Name\ndescription: d\n---\n",
		"wrong/SKILL.md":    skillDoc("other", "d"),
	})
	writeSkills(t, shared, map[string]string{"empty/SKILL.md": "---\nname: empty\ndescription: \"\"\n---\n"})
	code, out, errs = c.run("skill", "validate")
	assert.Equal(t, 1, code)
	assert.Equal(t, filepath.Join(own, "bad-name", "SKILL.md")+`:4: name "Bad_Name" must be 1 to 64 lower-case letters, digits and hyphens`+"\n"+
		filepath.Join(own, "wrong", "SKILL.md")+`:2: name "other" is not the folder's name "wrong"; make them the same`+"\n"+
		filepath.Join(shared, "empty", "SKILL.md")+":3: the description is empty; say what the skill does and when to use it\n", out)
	assert.Contains(t, errs, "3 problems; 2 skills are valid: fix each file:line above")

	code, out, _ = c.run("skill", "validate", "assistant")
	assert.Equal(t, 1, code, "an agent's check includes the shared skills it gets")
	assert.Equal(t, 3, strings.Count(out, "\n"), out)

	code, out, errs = c.run("skill", "validate", filepath.Join(own, "notes"))
	assert.Equal(t, 0, code, errs)
	assert.Equal(t, "1 skill valid\n", out)
	code, out, _ = c.run("skill", "validate", filepath.Join(own, "wrong", "SKILL.md"))
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "wrong/SKILL.md:2: ")
	code, out, _ = c.run("skill", "validate", shared)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "empty/SKILL.md:3: ")
	assert.NotContains(t, out, "notes")

	code, _, errs = c.run("skill", "validate", filepath.Join(c.dir, "nowhere"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "is neither an agent nor a folder of skills")
}
