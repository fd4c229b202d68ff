package wasmtools

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseManifest(t *testing.T) {
	m, err := LoadManifest("testdata/full.yaml")
	require.NoError(t, err)
	assert.Equal(t, "lookup", m.Name)
	assert.Equal(t, "Look a word up in the workspace's glossary.", m.Description)
	assert.JSONEq(t, `{"type":"object","properties":{"word":{"type":"string","description":"The word to look up."},
		"limit":{"type":"integer"}},"required":["word"]}`, string(m.Schema))
	assert.Equal(t, Limits{MemoryMB: 128, Timeout: 2 * time.Minute, OutputKB: 512}, m.Limits)
	assert.Equal(t, WorkspaceRW, m.Workspace)
	assert.Equal(t, []string{"LANG", "GLOSSARY_PATH"}, m.Env)
	assert.Equal(t, filepath.Join("testdata", "build", "lookup.wasm"), m.ModulePath())

	m, err = LoadManifest("testdata/minimal.yaml")
	require.NoError(t, err)
	assert.Equal(t, Limits{MemoryMB: 64, Timeout: 30 * time.Second, OutputKB: 256}, m.Limits)
	assert.Equal(t, WorkspaceNone, m.Workspace)
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(m.Schema))
	assert.Equal(t, filepath.Join("testdata", "tool.wasm"), m.ModulePath())
}

func TestParseManifest_ModulePath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ManifestName)
	m, err := ParseManifest(p, []byte("name: hello\ndescription: hi\n"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "tool.wasm"), m.ModulePath())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hello.wasm"), nil, 0o644))
	assert.Equal(t, filepath.Join(dir, "hello.wasm"), m.ModulePath())
}

func TestParseManifest_Errors(t *testing.T) {
	const head = "name: t\ndescription: d\n"
	cases := []struct{ yaml, want string }{
		{"", "tool.yaml:1: the tool manifest is empty"},
		{"description: d\n", "tool.yaml:1: name is required"},
		{"name: a b\ndescription: d\n", `tool.yaml:1: name "a b" may hold only letters`},
		{"name: t\n", "tool.yaml:1: description is required"},
		{head + "colour: red\n", `tool.yaml:3: unknown field "colour"`},
		{head + "limits:\n  timout: 5s\n", `tool.yaml:4: unknown field "timout" in limits (did you mean "timeout"?)`},
		{head + "limits:\n  memory_mb: 2048\n", "tool.yaml:4: limits.memory_mb must be between 1 and 1024"},
		{head + "limits:\n  memory_mb: 1.5\n", "tool.yaml:4: limits.memory_mb must be a whole number"},
		{head + "limits:\n  timeout: 30\n", `tool.yaml:4: limits.timeout must be a duration such as "30s"`},
		{head + "limits:\n  timeout: 11m\n", "tool.yaml:4: limits.timeout must be a duration such as \"30s\" or \"2m\", at most 10m0s"},
		{head + "limits:\n  output_kb: 0\n", "tool.yaml:4: limits.output_kb must be between 1"},
		{head + "limits: 5\n", "tool.yaml:3: limits must be a mapping"},
		{head + "workspace: yes\n", "tool.yaml:3: workspace must be none, ro or rw"},
		{head + "env: [HOME, 1X]\n", `tool.yaml:3: env lists variable names; "1X" is not one`},
		{head + "env:\n  - A\n  - A\n", "tool.yaml:5: env lists A twice"},
		{head + "schema:\n  type: string\n", "tool.yaml:3: schema must describe an object"},
		{head + "schema: [1]\n", "tool.yaml:3: schema must be a mapping"},
		{head + "module: ../x.wasm\n", "tool.yaml:3: module must be a .wasm file inside the tool's folder"},
		{head + "module: /abs/x.wasm\n", "tool.yaml:3: module must be a .wasm file"},
		{"name: [\n", "tool.yaml:1:"},
		{"name: a\n---\nname: b\n", "only one YAML document"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			_, err := ParseManifest("tool.yaml", []byte(c.yaml))
			require.Error(t, err)
			var ae *agents.Error
			require.ErrorAs(t, err, &ae)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestLoadManifest_Missing(t *testing.T) {
	_, err := LoadManifest(filepath.Join(t.TempDir(), "nope", ManifestName))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot read the tool manifest")
}
