package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

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

	s, err = ParseSkill("x/SKILL.md", []byte("---\r\nname: crlf\r\ndescription: \""+strings.Repeat("é", maxSkillDescription)+"\"\r\n---\r\n"))
	require.NoError(t, err, "a description is bounded in characters, not bytes")
	assert.Equal(t, "crlf", s.Name)
}

// Every problem of a SKILL.md is located by the file's own line: the key
// at fault, or the opening --- for a missing key.
func TestParseSkill_ErrorLines(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"no front matter\n", "x/SKILL.md:1: no front matter"},
		{"# Title\n\nprose first\n---\n", "x/SKILL.md:3: no front matter"},
		{"", "x/SKILL.md:1: no front matter"},
		{"---\nname: a\ndescription: d\n", "x/SKILL.md:1: the front matter has no closing --- line"},
		{"# T\n\n---\ndescription: d\n---\n", "x/SKILL.md:3: the front matter has no name"},
		{"---\nname: Bad_Name\ndescription: d\n---\n", `x/SKILL.md:2: name "Bad_Name" must be 1 to 64 lower-case`},
		{"---\nname: " + strings.Repeat("a", 65) + "\n---\n", "x/SKILL.md:2: name"},
		{"# T\n---\nname: a\n---\n", "x/SKILL.md:2: the front matter has no description"},
		{"---\nname: a\n\ndescription: \"  \"\n---\n", "x/SKILL.md:4: the description is empty"},
		{"---\nname: a\ndescription: " + strings.Repeat("d", maxSkillDescription+1) + "\n---\n", "x/SKILL.md:3: the description is longer than 1024 characters"},
		{"# T\n\n---\nname: a\ndescription: [\n---\n", "x/SKILL.md:5: "},
		{"---\nname: a\ndescription: d\nmetadata: [1, 2]\n---\n", "x/SKILL.md:4: "},
		{"---\nname: a\ndescription: d\nallowed-tools: {x: 1}\n---\n", "x/SKILL.md:4: "},
	} {
		_, err := ParseSkill("x/SKILL.md", []byte(c.in))
		require.Error(t, err, c.in)
		var e *Error
		require.ErrorAs(t, err, &e, c.in)
		assert.True(t, strings.HasPrefix(err.Error(), c.want), "%q: got %q, want prefix %q", c.in, err, c.want)
		assert.NotContains(t, err.Error(), "\n")
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
	assert.Contains(t, a.Warnings[0], "broken/SKILL.md:1: skill skipped: no front matter")
	assert.Contains(t, a.Warnings[1], `wrong/SKILL.md:2: skill skipped: name "other" is not the folder's name "wrong"`)
	require.Len(t, a.SkillProblems, 2)
	assert.Equal(t, filepath.Join(dir, "my-skills", "wrong", "SKILL.md"), a.SkillProblems[1].File)
	assert.Equal(t, 2, a.SkillProblems[1].Line)
	assert.Equal(t, filepath.Join(dir, "my-skills", "a-one"), a.Skills[0].Dir)
	assert.False(t, a.Skills[0].Shared)
	// a skill folder that gets its SKILL.md later reloads the agent
	assert.Contains(t, a.Files, filepath.Join(dir, "my-skills", "empty"))
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
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "huge/SKILL.md: skill skipped: is larger than 256 KiB")
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
	assert.Contains(t, a.Warnings[0], "evil/SKILL.md: skill skipped: is a link that leads outside its skills folder")
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

// skillText is a valid SKILL.md.
func skillText(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\nSteps.\n"
}

// The data dir's skills are every agent's too, after its own; its own
// skill of the same name wins, and the shared folder's files are watched.
func TestAgent_AddSharedSkills(t *testing.T) {
	dir := writeAgent(t, map[string]string{FileName: header + skillModel,
		"skills/mine/SKILL.md": skillText("mine", "Own"),
		"skills/both/SKILL.md": skillText("both", "Own version")})
	shared := filepath.Join(t.TempDir(), "skills")
	for name, text := range map[string]string{"both": skillText("both", "Shared version"), "common": skillText("common", "Shared"),
		"bad": "---\nname: bad\n---\n"} {
		require.NoError(t, os.MkdirAll(filepath.Join(shared, name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(shared, name, SkillFile), []byte(text), 0o644))
	}
	a, err := Load(dir)
	require.NoError(t, err)
	a.AddSharedSkills(shared)

	var got []string
	for _, s := range a.Skills {
		got = append(got, fmt.Sprintf("%s:%s:%v", s.Name, s.Description, s.Shared))
	}
	assert.Equal(t, []string{"both:Own version:false", "mine:Own:false", "common:Shared:true"}, got)
	assert.Equal(t, filepath.Join(shared, "common", SkillFile), a.Skills[2].Path)
	require.Len(t, a.Warnings, 1)
	assert.Equal(t, filepath.Join(shared, "bad", SkillFile)+":1: skill skipped: the front matter has no description; "+
		"add one saying what the skill does and when to use it", a.Warnings[0])
	require.Len(t, a.SkillProblems, 1)
	assert.Contains(t, a.Files, shared)
	assert.Contains(t, a.Files, filepath.Join(shared, "common", SkillFile))
	assert.Contains(t, a.RenderSystem(time.Now()), "<location>"+filepath.Join(shared, "common", SkillFile)+"</location>")

	// a missing shared folder is no problem, and is watched for its creation
	b, err := Load(dir)
	require.NoError(t, err)
	none := filepath.Join(t.TempDir(), "none")
	b.AddSharedSkills(none)
	assert.Len(t, b.Skills, 2)
	assert.Empty(t, b.Warnings)
	assert.Contains(t, b.Files, none)
}

// An agent gets at most maxSkills skills, its own and shared together.
func TestAgent_AddSharedSkillsBounded(t *testing.T) {
	files := map[string]string{FileName: header + skillModel}
	for i := range maxSkills - 1 {
		n := fmt.Sprintf("own%02d", i)
		files["skills/"+n+"/SKILL.md"] = skillText(n, "d")
	}
	a, err := Load(writeAgent(t, files))
	require.NoError(t, err)
	shared := t.TempDir()
	for _, n := range []string{"s1", "s2"} {
		require.NoError(t, os.MkdirAll(filepath.Join(shared, n), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(shared, n, SkillFile), []byte(skillText(n, "d")), 0o644))
	}
	a.AddSharedSkills(shared)
	assert.Len(t, a.Skills, maxSkills)
	assert.Equal(t, "s1", a.Skills[maxSkills-1].Name)
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "the other shared ones are not loaded")
}

// A skill folder that is a link staying inside the skills folder is used
// at its real path: the one the sandbox shows.
func TestLoad_SkillLinkInsideResolved(t *testing.T) {
	dir := writeAgent(t, map[string]string{FileName: header + skillModel,
		"skills/.store/tidy/SKILL.md": skillText("tidy", "d")})
	require.NoError(t, os.Symlink(filepath.Join(".store", "tidy"), filepath.Join(dir, "skills", "tidy")))
	a, err := Load(dir)
	require.NoError(t, err)
	require.Len(t, a.Skills, 1, a.Warnings)
	assert.Equal(t, filepath.Join(dir, "skills", ".store", "tidy"), a.Skills[0].Dir)
	assert.Equal(t, filepath.Join(dir, "skills", ".store", "tidy", SkillFile), a.Skills[0].Path)
}

func TestLoadSkill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "notes")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, SkillFile), []byte(skillText("notes", "Take notes")), 0o644))
	s, err := LoadSkill(dir + "/")
	require.NoError(t, err)
	assert.Equal(t, "Take notes", s.Description)
	assert.Equal(t, dir, s.Dir)

	require.NoError(t, os.WriteFile(filepath.Join(dir, SkillFile), []byte(skillText("other", "x")), 0o644))
	_, err = LoadSkill(dir)
	assert.EqualError(t, err, filepath.Join(dir, SkillFile)+`:2: name "other" is not the folder's name "notes"; make them the same`)

	require.NoError(t, os.Remove(filepath.Join(dir, SkillFile)))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, SkillFile), 0o644))
	_, err = LoadSkill(dir)
	assert.ErrorContains(t, err, "is a named pipe, device or socket", "a FIFO is refused without blocking")
}

// A SKILL.md comes from a folder anyone may have written: any bytes give a
// skill or an error, never a panic, and a skill is always a valid one.
func FuzzParseSkill(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: b\n---\nbody",
		"# Title\n\n---\nname: task-extraction\ndescription: x\nallowed-tools: bash web\nmetadata: {k: v}\n---\n",
		"---\nname: [\n---", "---\nname: a\n", "", "---\n---\n", "---\nname: A\ndescription: b\n---",
		"\r\n# T\r\n---\r\nname: a\r\ndescription: \"\"\r\n---\r\n", "---\nname: a\ndescription: d\nmetadata: [1]\n---\n",
		"  ---x\nname: a\n---", "#\n#\n\n---\nname: a\ndescription: |\n  two\n  lines\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSkill("SKILL.md", data)
		if err != nil {
			require.Nil(t, s)
			var e *Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, "SKILL.md", e.File)
			require.GreaterOrEqual(t, e.Line, 1, "%v", err)
			require.LessOrEqual(t, e.Line, strings.Count(string(data), "\n")+1, "%v", err)
			return
		}
		require.True(t, validSkillName(s.Name), "%q", s.Name)
		require.LessOrEqual(t, utf8.RuneCountInString(s.Description), maxSkillDescription)
		require.NotEmpty(t, strings.TrimSpace(s.Description))
	})
}
