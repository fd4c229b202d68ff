package agents

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePrincipal(t *testing.T) {
	for _, p := range []Principal{Owner(), TelegramPrincipal("123", false), TelegramPrincipal("-1001", false),
		TelegramPrincipal("55", true), PluginPrincipal("whatsapp", "+49:1"), OpenAIPrincipal("alice"),
		WebhookPrincipal("github"), HeartbeatPrincipal("assistant"), TaskPrincipal("home", "t-1"),
		{Kind: KindSession, ID: "session_01X"}} {
		back, err := ParsePrincipal(p.String())
		require.NoError(t, err, p.String())
		assert.Equal(t, p, back)
	}
	assert.Equal(t, "telegram:group:-1001", TelegramPrincipal("-1001", false).String(), "Telegram's groups are below zero")
	assert.Equal(t, "plugin:whatsapp:+49:1", PluginPrincipal("whatsapp", "+49:1").String())
	key := OpenAIPrincipal("sk-alice-secret").String()
	assert.Regexp(t, `^openai:[0-9a-f]{32}$`, key)
	assert.NotContains(t, key, "alice", "a digest, never the caller key")

	for in, want := range map[string]string{
		"":                                   "may not be empty",
		"nobody:1":                           "unknown kind",
		"owner:me":                           "the owner's is just owner",
		"telegram":                           "names no id",
		"webhook:a\nb":                       "control characters",
		"plugin:" + strings.Repeat("x", 600): "at most 512 bytes",
	} {
		_, err := ParsePrincipal(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}

// Sessions stored before principals existed are the owner's unless
// their gateway and chat say otherwise.
func TestPrincipalOf(t *testing.T) {
	for _, tc := range []struct{ gateway, chat, parent, want string }{
		{"", "", "", "owner"},
		{"http", "x", "", "owner"},
		{"cli", "", "", "owner"},
		{"acp", "", "", "owner"},
		{"web", "", "", "owner"},
		{"telegram", "42", "", "telegram:user:42"},
		{"telegram", "-100777", "", "telegram:group:-100777"},
		{"openai", "assistant:alice", "", OpenAIPrincipal("alice").String()},
		{"webhook", "github", "", "webhook:github"},
		{"heartbeat", "assistant", "", "schedule:heartbeat:assistant"},
		{"task", "home/t-1", "", "task:home/t-1"},
		{"agent", "session_01P", "session_01P", "session:session_01P"},
		{"whatsapp", "+491", "", "plugin:whatsapp:+491"},
	} {
		assert.Equal(t, tc.want, PrincipalOf(tc.gateway, tc.chat, tc.parent).String(), "%+v", tc)
	}
}

func TestLoadPolicy_Sessions(t *testing.T) {
	dir := t.TempDir()
	p, err := LoadPolicy()
	require.NoError(t, err)
	assert.Equal(t, ScopePrincipal, p.Sessions.ScopeFor(false), "by default a person's session sees its own principal's")
	assert.Equal(t, ScopeSelf, p.Sessions.ScopeFor(true), "and a webhook's, schedule's or task's only itself")
	assert.Empty(t, p.Sessions.Wider())

	agent := writePolicy(t, dir, "agent.yaml", "sessions:\n  scope: agent\n  automated: principal\n  linked: [owner, \"telegram:user:123\"]\n")
	p, err = LoadPolicy(agent)
	require.NoError(t, err)
	assert.Equal(t, ScopeAgent, p.Sessions.ScopeFor(false))
	assert.Equal(t, ScopePrincipal, p.Sessions.ScopeFor(true))
	assert.True(t, p.Sessions.Same(Owner(), TelegramPrincipal("123", false)))
	assert.False(t, p.Sessions.Same(Owner(), TelegramPrincipal("124", false)))
	assert.Len(t, p.Sessions.Wider(), 3)

	// The operator's general tier bounds the agent's: narrowing holds,
	// widening is ignored with a warning.
	general := writePolicy(t, dir, "general.yaml", "sessions: {scope: self}\n")
	p, err = LoadPolicy(general, agent)
	require.NoError(t, err)
	assert.Equal(t, ScopeSelf, p.Sessions.ScopeFor(false))
	assert.Equal(t, ScopePrincipal, p.Sessions.ScopeFor(true), "automated was not set by the general tier")
	require.Len(t, p.Warnings, 1)
	assert.Contains(t, p.Warnings[0], "agent.yaml:2: sessions.scope agent does not widen the self a more general policy file set")
	p, err = LoadPolicy(writePolicy(t, dir, "wide.yaml", "sessions: {scope: agent}\n"), writePolicy(t, dir, "narrow.yaml", "sessions: {scope: principal}\n"))
	require.NoError(t, err)
	assert.Equal(t, ScopePrincipal, p.Sessions.ScopeFor(false))

	for body, want := range map[string]string{
		"sessions: {scope: everyone}\n": `bad.yaml:1: sessions.scope "everyone" is not one of self, principal, agent`,
		"sessions:\n  linked: [bob]\n":  "bad.yaml:2: sessions.linked[0]: principal \"bob\" has an unknown kind",
		"sessions:\n  automated: [x]\n": "bad.yaml:2",
	} {
		_, err := LoadPolicy(writePolicy(t, dir, "bad.yaml", body))
		require.Error(t, err, body)
		assert.Contains(t, err.Error(), want, body)
	}
}

// agent import shows a policy's opt-in to wider reading of conversations
// and asks --trust for it; a policy that does not parse refuses the
// import.
func TestImport_SessionsOptIn(t *testing.T) {
	wide := evilAgent(t, ollamaModel, "", fileEntry("assistant/"+PolicyFile, "sessions: {scope: agent}\n"))
	err := importIn(t, wide, ImportOptions{})
	var ue *UntrustedError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "lets every conversation with it read all its other conversations, whoever had them (sessions.scope: agent)")
	agentsDir := filepath.Join(t.TempDir(), "agents")
	res, err := Import(bytes.NewReader(wide), agentsDir, ImportOptions{Trust: true})
	require.NoError(t, err)
	assert.Contains(t, res.Reach.Lines(),
		"conversations: lets every conversation with it read all its other conversations, whoever had them (sessions.scope: agent)")

	linked := evilAgent(t, ollamaModel, "", fileEntry("assistant/"+PolicyFile, "sessions:\n  linked: [owner, \"telegram:user:9\"]\n"))
	err = importIn(t, linked, ImportOptions{})
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "lets owner, telegram:user:9 read each other's conversations with it (sessions.linked)")

	narrow := evilAgent(t, ollamaModel, "", fileEntry("assistant/"+PolicyFile, "sessions: {scope: self}\n"))
	_, err = Import(bytes.NewReader(narrow), filepath.Join(t.TempDir(), "agents"), ImportOptions{})
	require.NoError(t, err, "narrowing needs no trust")

	broken := evilAgent(t, ollamaModel, "", fileEntry("assistant/"+PolicyFile, "sessions: {scope: all}\n"))
	err = importIn(t, broken, ImportOptions{Trust: true})
	require.Error(t, err)
	assert.False(t, errors.As(err, &ue))
	assert.Contains(t, err.Error(), "import: the agent's policy is invalid: assistant/policy.yaml:1: sessions.scope \"all\" is not one of self, principal, agent")
}
