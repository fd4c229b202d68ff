package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const skillModel = "spec:\n  model: {provider: ollama, name: m}\n"

func TestParseSkill(t *testing.T) {
	s, err := ParseSkill("x/SKILL.md", []byte("# Task Extraction\n\n---\nname: task-extraction\n"+
		"description: Extract tasks\nallowed-tools: bash  read_file\nlicense: MIT\nmetadata:\n  version: \"1.0\"\n  n: 2\n---\n\nBody.\n"))
	require.NoError(t, err)
	assert.Equal(t, &Skill{Name: "task-extraction", Description: "Extract tasks", Path: "x/SKILL.md",
		AllowedTools: []string{"bash", "read_file"}, Metadata: map[string]string{"version": "1.0", "n": "2"}}, s)

	for in, want := range map[string]string{
		"no front matter\n":                                 "no front matter",
		"---\nname: a\ndescription: d\n":                    "no front matter",
		"---\ndescription: d\n---\n":                        "has no name",
		"---\nname: Bad_Name\ndescription: d\n---\n":        `name "Bad_Name" must be 1 to 64 lower-case`,
		"---\nname: " + strings.Repeat("a", 65) + "\n---\n": "must be 1 to 64",
		"---\nname: a\n---\n":                               "has no description",
		"---\nname: a\ndescription: [\n---\n":               "x/SKILL.md",
	} {
		_, err := ParseSkill("x/SKILL.md", []byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}

func TestLoad_Skills(t *testing.T) {
	skill := func(name, desc string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n---\nSteps.\n"
	}
	dir := writeAgent(t, map[string]string{
		FileName:                    header + skillModel + "  skills_dir: ./my-skills/\n",
		"my-skills/b-two/SKILL.md":  skill("b-two", "Second"),
		"my-skills/a-one/SKILL.md":  skill("a-one", "First"),
		"my-skills/wrong/SKILL.md":  skill("other", "Mismatch"),
		"my-skills/broken/SKILL.md": "no front matter",
		"my-skills/empty/notes.txt": "not a skill",
		"my-skills/README.md":       "a file, not a skill",
	})
	a, err := Load(dir)
	require.NoError(t, err)
	require.Len(t, a.Skills, 2)
	assert.Equal(t, "a-one", a.Skills[0].Name)
	assert.Equal(t, filepath.Join(dir, "my-skills", "a-one", "SKILL.md"), a.Skills[0].Path)
	assert.True(t, filepath.IsAbs(a.Skills[0].Path))
	assert.Equal(t, "b-two", a.Skills[1].Name)
	require.Len(t, a.Warnings, 2)
	assert.Contains(t, a.Warnings[0], "broken/SKILL.md: skill skipped: no front matter")
	assert.Contains(t, a.Warnings[1], `wrong/SKILL.md: skill skipped: name "other" is not the folder's name "wrong"`)
}

func TestLoad_SkillsBounded(t *testing.T) {
	files := map[string]string{FileName: header + skillModel,
		"skills/huge/SKILL.md": "---\nname: huge\ndescription: d\n---\n" + strings.Repeat("x", maxSkillFile)}
	for i := range maxSkills + 1 {
		n := fmt.Sprintf("s%03d", i)
		files["skills/"+n+"/SKILL.md"] = "---\nname: " + n + "\ndescription: d\n---\n"
	}
	a, err := Load(writeAgent(t, files))
	require.NoError(t, err)
	assert.Len(t, a.Skills, maxSkills)
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "huge/SKILL.md: skill skipped: SKILL.md is larger than 256 KiB")
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "more than 64 skills")
}

func TestLoad_SkillLinkOutsideRefused(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "evil"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "evil", "SKILL.md"), []byte("---\nname: evil\ndescription: d\n---\n"), 0o644))
	dir := writeAgent(t, map[string]string{FileName: header + skillModel, "skills/.keep": ""})
	require.NoError(t, os.Symlink(filepath.Join(outside, "evil"), filepath.Join(dir, "skills", "evil")))
	a, err := Load(dir)
	require.NoError(t, err)
	assert.Empty(t, a.Skills)
	require.Len(t, a.Warnings, 1)
	assert.Contains(t, a.Warnings[0], ErrOutside.Error())
}

// A skill file newer than agent.yaml makes the agent's ModTime, so a cache
// comparing Files with ModTime does not rebuild it on every use.
func TestLoad_SkillModTime(t *testing.T) {
	dir := writeAgent(t, map[string]string{FileName: header + skillModel,
		"skills/a/SKILL.md": "---\nname: a\ndescription: d\n---\n"})
	later := time.Now().Add(time.Hour).Truncate(time.Second)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "skills", "a", "SKILL.md"), later, later))
	a, err := Load(dir)
	require.NoError(t, err)
	assert.True(t, a.ModTime.Equal(later), a.ModTime)
	assert.Contains(t, a.Files, filepath.Join(dir, "skills", "a", "SKILL.md"))
}

// A SKILL.md comes from a folder anyone may have written: any bytes give a
// skill or an error, never a panic, and a skill is always a valid one.
func FuzzParseSkill(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: b\n---\nbody",
		"# Title\n\n---\nname: task-extraction\ndescription: x\nallowed-tools: bash web\nmetadata: {k: v}\n---\n",
		"---\nname: [\n---", "---\nname: a\n", "", "---\n---\n", "---\nname: A\ndescription: b\n---",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSkill("SKILL.md", data)
		if err != nil {
			require.Nil(t, s)
			return
		}
		require.True(t, validSkillName(s.Name), "%q", s.Name)
		require.LessOrEqual(t, len(s.Description), maxSkillDescription)
	})
}
