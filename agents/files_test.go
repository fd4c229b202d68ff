package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secretText is what the planted secret file holds; no loaded agent may
// carry it.
const secretText = "OPENAI_API_KEY=sk-planted-secret"

// plantSecret writes a secret file beside (outside) the agent folder dir,
// as the data dir's agnx.env is beside the agents folder.
func plantSecret(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(dir), "agnx.env")
	require.NoError(t, os.WriteFile(p, []byte(secretText), 0o600))
	return p
}

func TestLoad_FilesStayInsideTheFolder(t *testing.T) {
	const model = "spec:\n  model:\n    provider: ollama\n    name: m\n"
	cases := []struct {
		name  string
		spec  string            // after model, with SECRET for the secret's absolute path
		links map[string]string // link name -> target (OUT: the secret)
		line  int               // 0: the error names the file itself
		want  string
	}{
		{"absolute soul", "  soul: SECRET\n", nil, 9, "spec.soul"},
		{"climbing soul", "  soul: ../agnx.env\n", nil, 9, `spec.soul "../agnx.env" leads outside`},
		{"etc shadow", "  instructions: /etc/shadow\n", nil, 9, `spec.instructions "/etc/shadow" leads outside`},
		{"dot dot inside the path", "  system_prompt: prompts/../../agnx.env\n", nil, 9, "spec.system_prompt"},
		{"linked named prompt", "  soul: ./SOUL.md\n", map[string]string{"SOUL.md": "OUT"}, 9, "spec.soul ./SOUL.md is a link that leads outside"},
		{"linked conventional prompt", "", map[string]string{"INSTRUCTIONS.md": "OUT"}, 0, "INSTRUCTIONS.md: is a link that leads outside"},
		{"linked folder", "  system_prompt: prompts/system.md\n", map[string]string{"prompts": "DIR"}, 9, "spec.system_prompt prompts/system.md is a link"},
		{"relative link out", "", map[string]string{"SOUL.md": "../agnx.env"}, 0, "SOUL.md: is a link that leads outside"},
		{"linked agent.yaml", "", map[string]string{FileName: "OUT"}, 0, "agent.yaml: is a link that leads outside"},
		{"absolute cli command", "  tools:\n    - {type: cli, name: x, command: /bin/sh}\n", nil, 10, `spec.tools[0].command "/bin/sh" leads outside`},
		{"linked cli command", "  tools:\n    - {type: cli, name: x, command: tool}\n", map[string]string{"tool": "/bin/sh"}, 10, "spec.tools[0].command \"tool\" is a link"},
		{"climbing readme", "  tools:\n    - {type: cli, name: x, command: run, readme: ../agnx.env}\n", nil, 10, "spec.tools[0].readme"},
		{"linked readme", "  tools:\n    - {type: cli, name: x, command: run, readme: README.md}\n", map[string]string{"README.md": "OUT"}, 10, "spec.tools[0].readme \"README.md\" is a link"},
		{"absolute wasm path", "  tools:\n    - {type: wasm, name: x, path: /tmp/x/tool.yaml}\n", nil, 10, "spec.tools[0].path"},
		{"linked wasm path", "  tools:\n    - {type: wasm, name: x, path: tools/x}\n", map[string]string{"tools": "DIR"}, 10, "spec.tools[0].path \"tools/x\" is a link"},
		{"climbing skills", "  skills_dir: ../skills\n", nil, 9, "spec.skills_dir"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeAgent(t, map[string]string{"run": "#!/bin/sh\n"})
			secret := plantSecret(t, dir)
			outDir := filepath.Join(filepath.Dir(dir), "outside")
			require.NoError(t, os.MkdirAll(filepath.Join(outDir, "x"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(outDir, "system.md"), []byte(secretText), 0o644))
			yaml := header + model + strings.ReplaceAll(tc.spec, "SECRET", secret)
			if tc.links[FileName] == "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), []byte(yaml), 0o644))
			}
			for name, target := range tc.links {
				switch target {
				case "OUT":
					target = secret
				case "DIR":
					target = outDir
				}
				require.NoError(t, os.Symlink(target, filepath.Join(dir, name)))
			}

			a, err := Load(dir)
			require.Error(t, err)
			assert.Nil(t, a)
			var e *Error
			require.ErrorAs(t, err, &e, "a refused file is a file:line error: %v", err)
			assert.Equal(t, tc.line, e.Line, err.Error())
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "sk-planted")
		})
	}
}

func TestLoad_LinkInsideTheFolderIsFollowed(t *testing.T) {
	dir := writeAgent(t, map[string]string{
		FileName:          header + "spec:\n  model:\n    provider: ollama\n    name: m\n  soul: ./SOUL.md\n",
		"prompts/soul.md": "I am the soul.",
	})
	require.NoError(t, os.Symlink("prompts/soul.md", filepath.Join(dir, "SOUL.md")))
	a, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "I am the soul.", a.Soul)
}

func TestAgent_ReadFile(t *testing.T) {
	dir := writeAgent(t, map[string]string{"tools/x/README.md": "read me"})
	secret := plantSecret(t, dir)
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "tools", "x", "out.md")))
	a := &Agent{Dir: dir}

	data, err := a.ReadFile("tools/x/README.md")
	require.NoError(t, err)
	assert.Equal(t, "read me", string(data))
	data, err = a.ReadFile(filepath.Join(dir, "tools/x/README.md"))
	require.NoError(t, err, "an absolute path under the folder is fine")
	assert.Equal(t, "read me", string(data))

	for _, name := range []string{"tools/x/out.md", secret, "../agnx.env", "/etc/shadow"} {
		_, err := a.ReadFile(name)
		assert.True(t, errors.Is(err, ErrOutside), "%s: %v", name, err)
		_, err = a.StatFile(name)
		assert.True(t, errors.Is(err, ErrOutside), "%s: %v", name, err)
	}
	st, err := a.StatFile("tools/x/README.md")
	require.NoError(t, err)
	assert.True(t, st.Mode().IsRegular())
}
