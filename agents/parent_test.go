package agents

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parentAgents is the agents folder of testdata/agnx, a Duragent workspace
// holding, unchanged, the agent "duragent init" writes and the book's
// example agents (see testdata/agnx/README.md).
const parentAgents = "testdata/agnx/.duragent/agents"

// accessWarning tells the warnings about spec.access keys apart: that part
// of the format is another change's (agents/routing.go), and its keys stop
// being unknown when it lands.
func accessWarning(w string) bool { return strings.Contains(w, " in spec.access") }

func loadParent(t *testing.T, name string) (*Agent, []string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(parentAgents, name))
	require.NoError(t, err)
	a, err := Load(dir)
	require.NoError(t, err, "Duragent's own agent %s loads", name)
	assert.Equal(t, name, a.Name)
	var rest []string
	for _, w := range a.Warnings {
		if !accessWarning(w) {
			rest = append(rest, strings.TrimPrefix(w, filepath.Join(dir, FileName)+":"))
		}
	}
	return a, rest
}

func TestParentAgents_Init(t *testing.T) {
	a, warnings := loadParent(t, "my-assistant")
	assert.Empty(t, warnings)
	assert.Equal(t, Model{Provider: "openrouter", Name: "moonshotai/kimi-k2.5"}, a.Model, "nothing unset is sent")
	assert.Equal(t, OnDisconnectPause, a.Session.OnDisconnect)
	assert.Contains(t, a.Soul, "You are a helpful assistant.")
	system := a.RenderSystem(time.Date(2026, 2, 16, 14, 30, 0, 0, time.UTC))
	assert.True(t, strings.HasPrefix(system, PrimeDirectives+"\n\nYou are a helpful assistant."))
	assert.Contains(t, system, "Today is ${date}.", "Duragent's template uses ${date}, which neither runtime fills in")
}

func TestParentAgents_ProductivityAssistant(t *testing.T) {
	a, warnings := loadParent(t, "productivity-assistant")
	assert.Equal(t, []string{
		"20: spec.system_prompt names ./SYSTEM_PROMPT.md, which does not exist, so the prompt goes without it; create the file or remove the key",
		"21: spec.instructions names ./INSTRUCTIONS.md, which does not exist, so the prompt goes without it; create the file or remove the key",
	}, warnings)
	temp := 0.7
	assert.Equal(t, Model{Provider: "openrouter", Name: "anthropic/claude-sonnet-4", Temperature: &temp,
		MaxInputTokens: 100000, MaxOutputTokens: 4096}, a.Model)
	assert.Equal(t, 20000, a.HistoryBudget())
	assert.Equal(t, "allowlist", a.Access.Groups.Policy)
	assert.Equal(t, "filesystem", a.Memory.Backend)
	assert.Len(t, a.Tools, 7)
	require.Len(t, a.Skills, 1)
	s := a.Skills[0]
	assert.Equal(t, "task-extraction", s.Name)
	assert.Equal(t, []string{"calculator"}, s.AllowedTools)
	assert.Equal(t, map[string]string{"version": "1.0.0", "author": "Duragent"}, s.Metadata)
	assert.Equal(t, filepath.Join(a.Dir, "skills", "task-extraction", "SKILL.md"), s.Path)
	system := a.RenderSystem(time.Now())
	assert.Contains(t, system, "Communication style rules:")
	assert.True(t, strings.HasSuffix(system, "\n\n<available_skills>\n  <skill>\n    <name>task-extraction</name>\n"+
		"    <description>Extract actionable tasks from a message or conversation</description>\n"+
		"    <location>"+s.Path+"</location>\n  </skill>\n</available_skills>"), system)
}

func TestParentAgents_CodeReviewer(t *testing.T) {
	a, warnings := loadParent(t, "code-reviewer")
	assert.Equal(t, []string{
		"10: spec.system_prompt names ./SYSTEM_PROMPT.md, which does not exist, so the prompt goes without it; create the file or remove the key",
		"11: spec.instructions names ./INSTRUCTIONS.md, which does not exist, so the prompt goes without it; create the file or remove the key",
	}, warnings)
	assert.Equal(t, PrimeDirectives, a.RenderSystem(time.Now()), "no prompt file: the prime directives alone")
}

// code-supervisor uses the anthropic provider: it loads and validates;
// running it needs that provider.
func TestParentAgents_CodeSupervisor(t *testing.T) {
	a, warnings := loadParent(t, "code-supervisor")
	assert.Equal(t, []string{
		"9: spec.system_prompt names ./SYSTEM_PROMPT.md, which does not exist, so the prompt goes without it; create the file or remove the key",
	}, warnings)
	assert.Equal(t, "anthropic", a.Model.Provider)
	assert.Equal(t, 200_000, a.Model.InputTokens())
	assert.Equal(t, 50, a.Session.MaxToolIterations)
	assert.Equal(t, OnDisconnectContinue, a.Session.OnDisconnect)
}

func TestParentAgents_All(t *testing.T) {
	entries, err := List(parentAgents)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	assert.ElementsMatch(t, []string{"my-assistant", "productivity-assistant", "code-reviewer", "code-supervisor"}, names)
}
