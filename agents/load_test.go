package agents

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeAgent makes an agent folder holding files (name -> content).
func writeAgent(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "assistant")
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

const header = "apiVersion: agnx/v1alpha1\nkind: Agent\nmetadata:\n  name: assistant\n"

func TestLoad_Defaults(t *testing.T) {
	dir := writeAgent(t, map[string]string{FileName: mustRead(t, "testdata/minimal.yaml")})
	a, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "minimal", a.Name)
	assert.Equal(t, "agnx/v1alpha1", a.APIVersion)
	assert.Nil(t, a.Model.Temperature, "unset: not sent")
	assert.Zero(t, a.Model.MaxOutputTokens, "unset: not sent")
	assert.Zero(t, a.Model.MaxInputTokens)
	assert.Equal(t, 131072, a.Model.InputTokens(), "qwen3 from the table")
	assert.Equal(t, Session{
		OnDisconnect: "pause", MaxToolIterations: 10, LLMTimeoutSeconds: 300,
		Context: Context{MaxHistoryTokens: 40000, MaxToolResultTokens: 8000, ToolResultTruncation: "head",
			ToolResultKeepFirst: 2, ToolResultKeepLast: 5},
	}, a.Session)
	assert.Equal(t, filepath.Join(dir, "skills"), a.SkillsDir)
	assert.Empty(t, a.Soul+a.SystemPrompt+a.Instructions)
	assert.False(t, a.ModTime.IsZero())
}

func TestLoad_Full(t *testing.T) {
	dir := writeAgent(t, map[string]string{
		FileName:            mustRead(t, "testdata/full.yaml"),
		"SOUL.md":           "soul",
		"prompts/system.md": "system",
		"INSTRUCTIONS.md":   "instructions",
	})
	a, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "full-agent", a.Name)
	assert.Equal(t, map[string]string{"team": "home", "tier": "1"}, a.Labels)
	assert.Equal(t, 0.0, *a.Model.Temperature, "an explicit 0 is kept")
	assert.Equal(t, Model{Provider: "openai", Name: "gpt-4o-mini", Temperature: a.Model.Temperature,
		MaxInputTokens: 100000, MaxOutputTokens: 2048, BaseURL: "https://api.example.com/v1", KeepAlive: "10m"}, a.Model)
	assert.Equal(t, OnDisconnectContinue, a.Session.OnDisconnect)
	assert.Equal(t, 25, a.Session.MaxToolIterations)
	require.NotNil(t, a.Session.TTLHours)
	assert.Equal(t, 48, *a.Session.TTLHours)
	off := false
	assert.Equal(t, Context{4000, 1000, "both", 1, 3, &off}, a.Session.Context)
	assert.False(t, a.Session.Context.Summarizes())
	assert.True(t, (&Context{}).Summarizes(), "summarize defaults to true")
	wantAccess := DefaultAccess()
	wantAccess.DM = AccessRule{Policy: "allowlist", Allowlist: []string{"telegram:12345"}}
	wantAccess.Groups.Allowlist = []string{}
	assert.Equal(t, wantAccess, a.Access)
	assert.Equal(t, "filesystem", a.Memory.Backend)
	require.Len(t, a.Tools, 4)
	assert.Equal(t, ToolRef{Type: "cli", Name: "weather", Command: "./tools/weather/run",
		Description: "Weather for a city.", Readme: "./tools/weather/README.md"}, a.Tools[1])
	assert.Equal(t, "tools/calc/calc.wasm", a.Tools[2].Path)
	assert.Equal(t, []string{"--stdio"}, a.Tools[3].Args)
	assert.Equal(t, filepath.Join(dir, "skills"), a.SkillsDir)
	assert.Equal(t, []string{"soul", "system", "instructions"}, []string{a.Soul, a.SystemPrompt, a.Instructions})
	assert.Equal(t, []string{dir, filepath.Join(dir, FileName), filepath.Join(dir, "SOUL.md"),
		filepath.Join(dir, "prompts/system.md"), filepath.Join(dir, "INSTRUCTIONS.md")}, a.Files)
}

func TestLoad_APIVersions(t *testing.T) {
	for _, v := range []string{"agnx/v1alpha1", "duragent/v1alpha1"} {
		t.Run(v, func(t *testing.T) {
			y := strings.Replace(header, "agnx/v1alpha1", v, 1) + "spec:\n  model: {provider: ollama, name: m}\n"
			a, err := Load(writeAgent(t, map[string]string{FileName: y}))
			require.NoError(t, err)
			assert.Equal(t, v, a.APIVersion)
		})
	}
}

func TestLoad_ConventionalPromptFiles(t *testing.T) {
	dir := writeAgent(t, map[string]string{
		FileName:           header + "spec:\n  model: {provider: ollama, name: m}\n",
		"SOUL.md":          "I am.",
		"SYSTEM_PROMPT.md": "Be good.",
	})
	a, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "I am.", a.Soul)
	assert.Equal(t, "Be good.", a.SystemPrompt)
	assert.Empty(t, a.Instructions)
}

func TestLoad_MissingAgentYAML(t *testing.T) {
	_, err := Load(t.TempDir())
	assert.True(t, errors.Is(err, fs.ErrNotExist), "%v", err)
}

func TestLoad_Errors(t *testing.T) {
	const model = "spec:\n  model:\n    provider: ollama\n    name: m\n" // lines 5-8
	tests := []struct {
		name, yaml string
		line       int
		msg        string
	}{
		{"misspelt required key", header + "spc:\n  model: {provider: ollama, name: m}\n", 1,
			`spec.model.provider is required (ollama, openai, anthropic or openrouter); line 5 has an unknown field "spc" (did you mean "spec"?), which was ignored`},
		{"misspelt key in tool", header + model + "  tools:\n    - {type: builtin, nme: x}\n",
			10, `spec.tools[0].name is required; line 10 has an unknown field "nme" in spec.tools[0] (did you mean "name"?), which was ignored`},
		{"temperature range", header + model + "    temperature: 3\n", 9, "spec.model.temperature 3 is out of range 0..2"},
		{"temperature negative", header + model + "    temperature: -0.5\n", 9, "spec.model.temperature -0.5 is out of range 0..2"},
		{"temperature NaN", header + model + "    temperature: .nan\n", 9, "spec.model.temperature NaN is out of range 0..2"},
		{"temperature text", header + model + "    temperature: hot\n", 9, "spec.model.temperature must be a number"},
		{"bad name", "apiVersion: agnx/v1alpha1\nkind: Agent\nmetadata:\n  name: my agent\n" + model,
			4, `metadata.name "my agent" may contain only letters, digits and hyphens`},
		{"missing name", "apiVersion: agnx/v1alpha1\nkind: Agent\nmetadata:\n  description: x\n" + model,
			3, "metadata.name is required"},
		{"bad provider", header + "spec:\n  model:\n    name: m\n    provider: olama\n",
			8, `spec.model.provider "olama" is not one of ollama, openai, anthropic, openrouter`},
		{"missing provider", header + "spec:\n  model:\n    name: m\n", 6,
			"spec.model.provider is required (ollama, openai, anthropic or openrouter)"},
		{"missing model name", header + "spec:\n  model:\n    provider: ollama\n", 6, "spec.model.name is required"},
		{"missing spec", header, 1, "spec.model.provider is required (ollama, openai, anthropic or openrouter)"},
		{"bad apiVersion", "apiVersion: v1\n", 1, `apiVersion "v1" is not one of agnx/v1alpha1, duragent/v1alpha1`},
		{"missing apiVersion", "kind: Agent\n", 1, "apiVersion is required (use agnx/v1alpha1)"},
		{"bad kind", "apiVersion: agnx/v1alpha1\nkind: Policy\n", 2, `kind "Policy" is not Agent`},
		{"base_url", header + model + "    base_url: localhost:11434\n", 9,
			`spec.model.base_url "localhost:11434" is not an http:// or https:// URL`},
		{"max_tool_iterations", header + model + "  session:\n    max_tool_iterations: 0\n", 10,
			"spec.session.max_tool_iterations 0 is out of range 1..100"},
		{"on_disconnect", header + model + "  session:\n    on_disconnect: stop\n", 10,
			`spec.session.on_disconnect "stop" is not one of pause, continue`},
		{"compaction", header + model + "  session:\n    compaction: zip\n", 10,
			`spec.session.compaction "zip" is not one of discard, archive, disabled`},
		{"truncation", header + model + "  session:\n    context:\n      tool_result_truncation: middle\n", 11,
			`spec.session.context.tool_result_truncation "middle" is not one of head, tail, both`},
		{"summarize", header + model + "  session:\n    context:\n      summarize: maybe\n", 11, "spec.session.context.summarize must be true or false"},
		{"negative keep", header + model + "  session:\n    context:\n      tool_result_keep_last: -1\n", 11,
			"spec.session.context.tool_result_keep_last -1 must be at least 0"},
		{"fractional int", header + model + "  session:\n    ttl_hours: 1.5\n", 10, "spec.session.ttl_hours must be a whole number"},
		{"huge int", header + model + "  session:\n    ttl_hours: 99999999999999999999\n", 10, "spec.session.ttl_hours is too large"},
		{"quoted int", header + model + "  session:\n    ttl_hours: \"12\"\n", 10, "spec.session.ttl_hours must be a whole number"},
		{"tag without value", header + model + "  tools: !x\n", 9, "spec.tools has a tag but no value"},
		{"list expected", header + model + "  tools: bash\n", 9, "spec.tools must be a list"},
		{"mapping expected", header + "spec:\n  model: ollama\n", 6, "spec.model must be a mapping"},
		{"string expected", header + model + "  soul: [a]\n", 9, "spec.soul must be a string"},
		{"tool type", header + model + "  tools:\n    - {type: plugin, name: x}\n", 10,
			`spec.tools[0].type "plugin" is not one of builtin, cli, wasm, mcp`},
		{"tool without type", header + model + "  tools:\n    - name: x\n", 10, "spec.tools[0].type is required (builtin, cli, wasm or mcp)"},
		{"cli without command", header + model + "  tools:\n    - {type: builtin, name: a}\n    - {type: cli, name: b}\n", 11,
			"spec.tools[1].command is required for a cli tool"},
		{"duplicate tool", header + model + "  tools:\n    - {type: builtin, name: a}\n    - {type: builtin, name: a}\n", 11,
			`spec.tools[1].name "a" is already used by spec.tools[0]`},
		{"tool result tokens 0", header + model + "  session:\n    context:\n      max_tool_result_tokens: 0\n", 11,
			"spec.session.context.max_tool_result_tokens 0 must be at least 1"},
		{"both max tokens", header + "spec:\n  model: {provider: ollama, name: m, max_tokens: 5, max_output_tokens: 6}\n", 6,
			"spec.model has both max_output_tokens and max_tokens, its older name; keep one"},
		{"duplicate key", header + model + "spec: {}\n", 9, `mapping key "spec" already defined at [5:1]`},
		{"syntax", header + "spec: [\n", 5, "sequence end token ']' not found"},
		{"two documents", header + model + "---\nkind: Agent\n", 10, "only one YAML document is allowed"},
		{"empty", "# nothing\n", 1, "the file is empty; it needs apiVersion, kind, metadata and spec"},
		{"not a mapping", "- a\n", 1, "the document must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeAgent(t, map[string]string{FileName: tt.yaml})
			_, err := Load(dir)
			require.Error(t, err)
			var e *Error
			require.ErrorAs(t, err, &e)
			want := &Error{File: filepath.Join(dir, FileName), Line: tt.line, Msg: tt.msg}
			assert.Equal(t, want.Error(), err.Error())
		})
	}
}

// Agnx ignores keys it does not know in every file; so does Load, and says
// which it ignored.
func TestLoad_UnknownKeysWarn(t *testing.T) {
	const model = "spec:\n  model:\n    provider: ollama\n    name: m\n" // lines 5-8
	dir := writeAgent(t, map[string]string{FileName: header + model + "    flavour: x\n  modle: {}\nstatus: {}\n"})
	a, err := Load(dir)
	require.NoError(t, err)
	file := filepath.Join(dir, FileName)
	assert.Equal(t, []string{
		file + `:9: unknown field "flavour" in spec.model (ignored)`,
		file + `:10: unknown field "modle" in spec (did you mean "model"?) (ignored)`,
		file + `:11: unknown field "status" (ignored)`,
	}, a.Warnings)
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(b)
}
