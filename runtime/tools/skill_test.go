package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skillFolder lays out an agent folder with one skill, a secret beside
// it, and the hostile files a skill folder may hold.
func skillFolder(t *testing.T) (tool *Skill, dir string) {
	t.Helper()
	agent := t.TempDir()
	dir = filepath.Join(agent, "skills", "pdf")
	files := map[string]string{
		"agent.yaml":                    "TOP SECRET agent.yaml",
		"skills/pdf/SKILL.md":           "---\nname: pdf\ndescription: Fill PDF forms\n---\nSee [forms](reference/forms.md); run scripts/fill.sh.\n",
		"skills/pdf/reference/forms.md": "# Forms\nStep one.\n",
		"skills/pdf/scripts/fill.sh":    "#!/bin/sh\necho filled\n",
		"skills/pdf/.git/config":        "hidden",
		"skills/pdf/blob.bin":           "a\x00b",
		"skills/other/SKILL.md":         "---\nname: other\ndescription: d\n---\n",
	}
	for name, content := range files {
		p := filepath.Join(agent, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	require.NoError(t, os.Symlink(filepath.Join(agent, "agent.yaml"), filepath.Join(dir, "link-out")))
	require.NoError(t, os.Symlink(agent, filepath.Join(dir, "dir-out")))
	require.NoError(t, os.Symlink("reference/forms.md", filepath.Join(dir, "link-in")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	return &Skill{Skills: []SkillDir{{Name: "other", Dir: filepath.Join(agent, "skills", "other")}, {Name: "pdf", Dir: dir}}}, dir
}

func TestSkill_Run(t *testing.T) {
	tool, dir := skillFolder(t)
	tests := []struct {
		name, args, want string
		isErr            bool
	}{
		{"referenced file", `{"name":"pdf","file":"reference/forms.md"}`, "# Forms\nStep one.\n", false},
		{"script", `{"name":"pdf","file":"./scripts/../scripts/fill.sh"}`, "echo filled", false},
		{"absolute inside", `{"name":"pdf","file":"` + dir + `/scripts/fill.sh"}`, "echo filled", false},
		{"link inside", `{"name":"pdf","file":"link-in"}`, "Step one.", false},
		{"agent.yaml above", `{"name":"pdf","file":"../../agent.yaml"}`, "is not inside the folder of skill pdf", true},
		{"sibling skill", `{"name":"pdf","file":"../other/SKILL.md"}`, "is not inside the folder of skill pdf", true},
		{"absolute elsewhere", `{"name":"pdf","file":"/etc/passwd"}`, "is not inside the folder of skill pdf", true},
		{"symlink out", `{"name":"pdf","file":"link-out"}`, "leads outside the folder of skill pdf", true},
		{"folder link out", `{"name":"pdf","file":"dir-out/agent.yaml"}`, "leads outside the folder of skill pdf", true},
		{"fifo", `{"name":"pdf","file":"pipe"}`, "named pipe, device or socket", true},
		{"folder", `{"name":"pdf","file":"scripts"}`, "is a folder", true},
		{"missing", `{"name":"pdf","file":"nope.md"}`, "skill pdf has no file nope.md", true},
		{"binary", `{"name":"pdf","file":"blob.bin"}`, "is a binary file; use it in the sandbox at " + dir + "/blob.bin", true},
		{"unknown skill", `{"name":"tax"}`, `there is no skill "tax"; the skills are: other, pdf`, true},
		{"no name", `{}`, `there is no skill ""`, true},
		{"unknown field", `{"name":"pdf","path":"x"}`, "failed to parse tool arguments", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Run(context.Background(), []byte(tt.args))
			require.NoError(t, err)
			assert.Equal(t, tt.isErr, res.IsError, res.Content)
			assert.Contains(t, res.Content, tt.want)
			assert.NotContains(t, res.Content, "TOP SECRET")
		})
	}
}

// Without a file, the skill tool returns SKILL.md, front matter and
// body, then the skill's files: hidden ones left out, links not followed.
func TestSkill_Overview(t *testing.T) {
	tool, dir := skillFolder(t)
	res, err := tool.Run(context.Background(), []byte(`{"name":"pdf"}`))
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	assert.True(t, strings.HasPrefix(res.Content, "---\nname: pdf\ndescription: Fill PDF forms\n---\nSee [forms]"), res.Content)
	_, list, ok := strings.Cut(res.Content, "[files of skill pdf, in "+dir+"; read one with file set to its path, or use it at that folder in the sandbox]\n")
	require.True(t, ok, res.Content)
	assert.Equal(t, "SKILL.md (100 bytes)\nblob.bin (3 bytes)\ndir-out (link)\nlink-in (link)\nlink-out (link)\npipe (not a regular file)\n"+
		"reference/\nscripts/\nreference/forms.md (18 bytes)\nscripts/fill.sh (22 bytes)\n", list)
	var details map[string]any
	require.NoError(t, json.Unmarshal(res.Details, &details))
	assert.Equal(t, filepath.Join(dir, "SKILL.md"), details["path"])
}

// A big file is cut at 256 KiB with a note saying how to read on; a deep
// or crowded folder is listed only in part.
func TestSkill_Bounds(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: big\ndescription: d\n---\n"), 0o644))
	huge := strings.Repeat("é", maxSkillRead) // 2 bytes each: the cap falls on a character's start
	require.NoError(t, os.WriteFile(filepath.Join(dir, "huge.md"), []byte("x"+huge), 0o644))
	deep := filepath.Join(dir, "a", "b", "c", "d", "e")
	require.NoError(t, os.MkdirAll(deep, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(deep, "deep.md"), nil, 0o644))
	for i := range maxSkillList {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a", fmt.Sprintf("f%03d", i)), nil, 0o644))
	}
	tool := &Skill{Skills: []SkillDir{{Name: "big", Dir: dir}}}

	res, err := tool.Run(context.Background(), []byte(`{"name":"big","file":"huge.md"}`))
	require.NoError(t, err)
	require.False(t, res.IsError)
	body, note, ok := strings.Cut(res.Content, "\n[... cut: huge.md has ")
	require.True(t, ok, res.Content[len(res.Content)-200:])
	assert.Len(t, body, maxSkillRead-1, "the cut drops the character split in two")
	assert.Contains(t, note, "only the first 256 KiB are shown; read the rest in the sandbox, e.g. tail -c +262145 "+filepath.Join(dir, "huge.md"))

	res, err = tool.Run(context.Background(), []byte(`{"name":"big"}`))
	require.NoError(t, err)
	_, list, ok := strings.Cut(res.Content, "use it at that folder in the sandbox]\n")
	require.True(t, ok, res.Content)
	list, ok = strings.CutSuffix(list, "[... more files not listed: only 200 entries, 4 folders deep, are shown ...]\n")
	require.True(t, ok, list)
	lines := strings.Split(strings.TrimSuffix(list, "\n"), "\n")
	assert.Len(t, lines, maxSkillList)
	assert.Equal(t, []string{"SKILL.md (33 bytes)", "a/", "huge.md (524289 bytes)", "a/b/", "a/f000 (0 bytes)"}, lines[:5],
		"shallow files first")
}

// A skill folder swapped for a link out after the load is not followed.
func TestSkill_FolderSwappedForLink(t *testing.T) {
	tool, dir := skillFolder(t)
	agent := filepath.Dir(filepath.Dir(dir))
	require.NoError(t, os.Rename(dir, dir+".old"))
	require.NoError(t, os.Symlink(agent, dir))
	res, err := tool.Run(context.Background(), []byte(`{"name":"pdf","file":"agent.yaml"}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "the folder of skill pdf cannot be opened")
	assert.NotContains(t, res.Content, "TOP SECRET")
}

func TestSkill_SpecAndSubject(t *testing.T) {
	tool, dir := skillFolder(t)
	spec := tool.Spec()
	assert.Equal(t, "skill", spec.Name)
	var schema struct {
		Properties struct {
			Name struct{ Enum []string } `json:"name"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	require.NoError(t, json.Unmarshal(spec.Schema, &schema))
	assert.Equal(t, []string{"other", "pdf"}, schema.Properties.Name.Enum)
	assert.Equal(t, []string{"name"}, schema.Required)

	for args, want := range map[string]string{
		`{"name":"pdf"}`: "pdf/SKILL.md",
		`{"name":"pdf","file":"scripts/./fill.sh"}`:           "pdf/scripts/fill.sh",
		`{"name":"pdf","file":"` + dir + `/scripts/fill.sh"}`: "pdf/scripts/fill.sh",
		`{"name":"pdf","file":"../../agent.yaml"}`:            "pdf/../../agent.yaml",
	} {
		assert.Equal(t, want, tool.Subject([]byte(args)), args)
	}
}
