package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
)

func TestDefaultYAML_MatchesDefault(t *testing.T) {
	c, err := Parse("agnx.yaml", DefaultYAML())
	require.NoError(t, err)
	assert.Equal(t, "agnx.yaml", c.File)
	c.File, c.doc = "", nil
	assert.Equal(t, Default(), c)
	assert.NoError(t, Default().Validate())
}

func TestParse_Empty(t *testing.T) {
	for _, src := range []string{"", "# only a comment\n", "server:\n"} {
		c, err := Parse("agnx.yaml", []byte(src))
		require.NoError(t, err, src)
		c.File, c.doc = "", nil
		want := Default()
		want.RouteFallback = "" // a file without runtime.default_agent routes as Agnx does
		assert.Equal(t, want, c, src)
	}
}

func TestLoad_Full(t *testing.T) {
	// Unset, so the default applies (a variable set to "" would stay empty).
	t.Setenv("AGNX_TEST_ADMIN", "")
	os.Unsetenv("AGNX_TEST_ADMIN")
	c, err := Load("testdata/full.yaml")
	require.NoError(t, err)
	assert.Equal(t, "testdata/full.yaml", c.File)
	assert.Equal(t, "/var/lib/agnx-lite", c.DataDir)
	assert.Equal(t, "/srv/agents", c.AgentsDir)
	assert.Equal(t, Server{Host: "0.0.0.0", Port: 9090, RequestTimeoutSeconds: 30, IdleTimeoutSeconds: 60,
		KeepAliveIntervalSeconds: 5, MaxConnections: 10, MaxConnectionsPerClient: 16, MaxStreams: 128,
		AdminToken: "admin-secret-4f1e2d3c", APIToken: "api-secret-9a8b7c6d5e"}, c.Server)
	assert.Equal(t, Sessions{TTLHours: 72, Compaction: "discard"}, c.Sessions)
	assert.Equal(t, Telegram{Enabled: true, BotToken: "123456:ABC-secret", Allowlist: []int64{111, 222},
		APIBaseURL: "http://127.0.0.1:8081"}, c.Gateways.Telegram)
	assert.Equal(t, []ExternalGateway{
		{Name: "discord", Command: "/usr/local/bin/agnx-discord", Args: []string{"--verbose"},
			Env: map[string]Secret{"DISCORD_TOKEN": "discord-secret"}, Restart: "always"},
		{Name: "matrix", Command: "./matrix", Restart: "on_failure"},
	}, c.Gateways.External)
	assert.Equal(t, []Route{
		{Match: RouteMatch{Gateway: "telegram", ChatType: "group", ChatID: "-100123"}, Agent: "helper"},
		{Match: RouteMatch{SenderID: "42"}, Agent: "bob"},
		{Agent: "assistant"},
	}, c.Routes)
	assert.Equal(t, "trust", c.Sandbox.Mode)
	assert.Equal(t, Runtime{MaxConcurrentTurns: 1, MaxConcurrentTools: 2, MaxLoadedAgents: 3,
		DefaultAgent: "helper", MemoryLimitMB: 0, ApprovalTimeoutSeconds: 0, SessionIdleSeconds: 600, DBReserveMB: 4}, c.Runtime)
}

func TestLoad_Missing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "agnx.yaml"))
	assert.True(t, errors.Is(err, fs.ErrNotExist), "%v", err)
}

func TestParse_Errors(t *testing.T) {
	tests := []struct {
		name, yaml string
		line       int
		msg        string
	}{
		{"port range", "server:\n  host: 0.0.0.0\n  port: 70000\n", 3, "server.port 70000 is out of range 1..65535"},
		{"port zero", "server:\n  port: 0\n", 2, "server.port 0 is out of range 1..65535"},
		{"port text", "server:\n  port: http\n", 2, "server.port must be a whole number"},
		{"empty host", "server:\n  host: ''\n", 2, "server.host must not be empty (use 127.0.0.1, or 0.0.0.0 for every interface)"},
		{"negative timeout", "server:\n  max_connections: -1\n  idle_timeout_seconds: -2\n", 2,
			"server.max_connections -1 must not be negative"},
		{"compaction", "sessions:\n  compaction: zip\n", 2, `sessions.compaction "zip" is not one of discard, archive, disabled`},
		{"restart", "gateways:\n  external:\n    - name: a\n      command: x\n      restart: sometimes\n", 5,
			`gateways.external[0].restart "sometimes" is not one of always, on_failure, never`},
		{"external without command", "gateways:\n  external:\n    - name: a\n", 3, "gateways.external[0].command is required"},
		{"external duplicate", "gateways:\n  external:\n    - {name: a, command: x}\n    - {name: a, command: y}\n", 4,
			`gateways.external[1].name "a" is already used by gateways.external[0]`},
		{"telegram without token", "gateways:\n  telegram:\n    enabled: true\n", 2,
			"gateways.telegram.bot_token is required when telegram is enabled (e.g. bot_token: ${TELEGRAM_BOT_TOKEN})"},
		{"telegram enabled text", "gateways:\n  telegram:\n    enabled: yes please\n", 3, "gateways.telegram.enabled must be true or false"},
		{"allowlist text", "gateways:\n  telegram:\n    allowlist: [alice]\n", 3, "gateways.telegram.allowlist[0] must be a whole number"},
		{"sandbox", "sandbox:\n  mode: podman\n", 2, `sandbox.mode "podman" is not one of bwrap, trust`},
		{"route without agent", "routes:\n  - match: {}\n    agent: a\n  - match: {gateway: telegram}\n", 4,
			"routes[1] has no agent (add agent: NAME)"},
		{"route bad agent", "routes:\n  - agent: my agent\n", 2,
			`routes[0].agent "my agent" is not a valid agent name (letters, digits and hyphens)`},
		{"routes not a list", "routes:\n  match: {}\n", 2, "routes must be a list"},
		{"turns", "runtime:\n  max_concurrent_turns: 0\n", 2, "runtime.max_concurrent_turns 0 must be at least 1"},
		{"default agent", "runtime:\n  default_agent: a/b\n", 2,
			`runtime.default_agent "a/b" is not a valid agent name (letters, digits and hyphens)`},
		{"syntax", "server: [\n", 1, "sequence end token ']' not found"},
		{"unset env", "workspace: /data\nserver:\n  admin_token: ${AGNX_TEST_UNSET}\n", 3,
			"environment variable AGNX_TEST_UNSET is not set (use ${AGNX_TEST_UNSET:-default} for a default)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("etc/agnx.yaml", []byte(tt.yaml))
			require.Error(t, err)
			var e *agents.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, (&agents.Error{File: "etc/agnx.yaml", Line: tt.line, Msg: tt.msg}).Error(), err.Error())
		})
	}
}

func TestConfig_ValidateWithoutFile(t *testing.T) {
	c := Default()
	c.Server.Port = -1
	assert.EqualError(t, c.Validate(), "server.port -1 is out of range 1..65535")
	c.File = "x.yaml"
	assert.EqualError(t, c.Validate(), "x.yaml: server.port -1 is out of range 1..65535")
}

func TestLoad_TooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agnx.yaml")
	require.NoError(t, os.WriteFile(p, make([]byte, maxConfigSize+1), 0o600))
	_, err := Load(p)
	assert.EqualError(t, err, p+": the file is larger than 1024 KiB")
}

// Keys agnx-lite does not know are ignored, as Agnx does, and reported.
func TestParse_UnknownKeysWarn(t *testing.T) {
	c, err := Parse("etc/agnx.yaml", []byte("server:\n  prot: 80\n# c\nroute: []\nfile: x\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{
		`etc/agnx.yaml:2: unknown field "prot" in server (did you mean "port"?) (ignored)`,
		`etc/agnx.yaml:4: unknown field "route" (did you mean "routes"?) (ignored)`,
		`etc/agnx.yaml:5: unknown field "file" (ignored)`,
	}, c.Warnings)
	assert.Equal(t, Default().Server.Port, c.Server.Port)
}

// A chat of Telegram (when on) or of a plugin is served by its gateway's
// outbox; a session without a chat, or of the HTTP API, is not.
func TestGateways_ServesChat(t *testing.T) {
	g := Gateways{Telegram: Telegram{Enabled: true}, External: []ExternalGateway{{Name: "signal"}}}
	assert.True(t, g.ServesChat("telegram", "42"))
	assert.True(t, g.ServesChat("signal", "+4912"))
	assert.False(t, g.ServesChat("telegram", ""), "no chat")
	assert.False(t, g.ServesChat("", "42"))
	assert.False(t, g.ServesChat("http", "42"))
	g.Telegram.Enabled = false
	assert.False(t, g.ServesChat("telegram", "42"), "Telegram off")
}
