package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Agnx's `duragent init` template loads unchanged: only host and the
// sessions' ttl (Agnx's week) differ from the defaults, and no gateway runs.
func TestParse_AgnxInitTemplate(t *testing.T) {
	c, err := Load("testdata/agnx/duragent.yaml")
	require.NoError(t, err)
	want := Default()
	want.Server.Host = "0.0.0.0"
	want.Sessions.TTLHours = AgnxTTLHours
	want.File, want.doc, want.RouteFallback = c.File, c.doc, ""
	assert.Equal(t, want, c)
	assert.Empty(t, c.Warnings)
}

// Every key of a duragent.yaml means what it means to Agnx.
func TestParse_AgnxFull(t *testing.T) {
	t.Setenv("AGNX_T_API_TOKEN", "api-token-0123456789")
	t.Setenv("AGNX_T_TELEGRAM", "123:abc")
	c, err := Load("testdata/agnx/full.yaml")
	require.NoError(t, err)
	assert.Equal(t, "./state", c.DataDir)
	assert.Equal(t, "./my-agents", c.AgentsDir)
	assert.Equal(t, Server{Host: "127.0.0.1", Port: 9090, RequestTimeoutSeconds: 120, IdleTimeoutSeconds: 60,
		KeepAliveIntervalSeconds: 20, MaxConnections: 1024, MaxConnectionsPerClient: 16, MaxStreams: 128,
		APIToken: "api-token-0123456789"}, c.Server)
	assert.Equal(t, Sessions{TTLHours: 168, Compaction: "archive"}, c.Sessions)
	assert.Equal(t, "bwrap", c.Sandbox.Mode, "Agnx's bubblewrap is bwrap")
	assert.True(t, c.Gateways.Telegram.Enabled, "a telegram block is enabled unless it says otherwise")
	assert.Equal(t, Secret("123:abc"), c.Gateways.Telegram.BotToken)
	assert.Equal(t, []ExternalGateway{
		{Name: "my-gateway", Command: "/path/to/gateway-binary", Args: []string{"--verbose"},
			Env: map[string]Secret{"TOKEN": "api-token-0123456789"}, Restart: "always"},
		{Name: "other", Command: "./gw", Restart: "on_failure"},
	}, c.Gateways.External)
	assert.Equal(t, []Route{
		{Match: RouteMatch{Gateway: "Telegram", ChatType: "DM"}, Agent: "my-assistant"},
		{Match: RouteMatch{ChatID: "-100123", SenderID: "42"}, Agent: "work"},
		{Agent: "default-assistant"},
	}, c.Routes)
	assert.Empty(t, c.RouteFallback)
	assert.Equal(t, []string{
		"testdata/agnx/full.yaml:6: services.session.path is accepted but unused: agnx-lite keeps every session in agnx.db in the workspace (bring Agnx sessions in with agnx-lite session import)",
		"testdata/agnx/full.yaml:26: gateways.discord is ignored: agnx-lite has no built-in Discord gateway (run one as a gateways.external plugin)",
	}, c.Warnings)
}

func TestParse_AgnxEdges(t *testing.T) {
	t.Setenv("AGNX_T_EMPTY", "")
	for src, check := range map[string]func(*Config){
		"gateways:\n  telegram:\n    enabled: false\n": func(c *Config) { assert.False(t, c.Gateways.Telegram.Enabled) },
		"gateways:\n  telegram:\n":                     func(c *Config) { assert.False(t, c.Gateways.Telegram.Enabled, "null is absent") },
		"runtime:\n  default_agent: helper\n":          func(c *Config) { assert.Equal(t, "helper", c.RouteFallback) },
		"sandbox:\n  mode: trust\n":                    func(c *Config) { assert.Equal(t, "trust", c.Sandbox.Mode) },
		// ${VAR:-d} gives d only when VAR is unset.
		"server:\n  admin_token: ${AGNX_T_EMPTY:-x}\n": func(c *Config) { assert.Empty(t, c.Server.AdminToken) },
		// Comments are not expanded: an unset variable there is no error.
		"# token: ${AGNX_T_UNSET}\nserver:\n  port: 81 # ${AGNX_T_UNSET}\n": func(c *Config) { assert.Equal(t, 81, c.Server.Port) },
	} {
		c, err := Parse("duragent.yaml", []byte(src))
		require.NoError(t, err, src)
		check(c)
	}
	_, err := Parse("duragent.yaml", []byte("sandbox:\n  mode: docker\n"))
	assert.EqualError(t, err, "duragent.yaml:2: sandbox.mode docker is not supported by agnx-lite: use bubblewrap (tools confined, no container daemon) or trust")

	c, err := Parse("duragent.yaml", []byte("gateways:\n  external:\n    - {name: x, command: y}\nroutes:\n  - match: {gateway: x}\n    agent: a\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"duragent.yaml:4: messages from gateways that no route matches are dropped, as in Agnx: add a route with match: {} or set runtime.default_agent"}, c.Warnings)
}

// -c duragent.yaml keeps Agnx's layout: workspace .duragent beside the
// file, agents in {workspace}/agents, relative paths from the file's folder.
func TestLocate_AgnxLayout(t *testing.T) {
	t.Setenv(EnvDataDir, "")
	dir := t.TempDir()
	file := filepath.Join(dir, "duragent.yaml")
	require.NoError(t, os.WriteFile(file, []byte("server:\n  port: 8080\n"), 0o600))
	c, err := Locate(file, "")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, ".duragent"), c.DataDir)
	assert.Equal(t, filepath.Join(dir, ".duragent", "agents"), c.AgentsDir)
	assert.Equal(t, filepath.Join(dir, ".duragent", "agnx.db"), c.DBPath())

	require.NoError(t, os.WriteFile(file, []byte("workspace: ws\nagents_dir: ../shared/agents\n"), 0o600))
	c, err = Locate(file, "")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "ws"), c.DataDir)
	assert.Equal(t, filepath.Join(filepath.Dir(dir), "shared", "agents"), c.AgentsDir)

	// --data-dir wins over workspace.
	c, err = Locate(file, filepath.Join(dir, "d"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "d"), c.DataDir)

	// A missing duragent.yaml means the defaults, as in Agnx, and says so.
	missing := filepath.Join(dir, "sub", "duragent.yaml")
	c, err = Locate(missing, "")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "sub", ".duragent"), c.DataDir)
	assert.Equal(t, []string{missing + " does not exist: the defaults apply, as in Agnx (workspace .duragent beside it)"}, c.Warnings)
	assert.True(t, c.FileMissing(), "doctor says so rather than that the file is valid")
	_, err = Locate(filepath.Join(dir, "sub", "agnx.yaml"), "")
	assert.ErrorIs(t, err, os.ErrNotExist, "agnx-lite's own file given with -c must exist")

	// agnx-lite's own agnx.yaml keeps its meaning: no workspace key means
	// the default data dir.
	own := filepath.Join(dir, "agnx.yaml")
	require.NoError(t, os.WriteFile(own, []byte("server:\n  port: 8080\n"), 0o600))
	c, err = Locate(own, "")
	require.NoError(t, err)
	assert.Equal(t, DefaultDataDir(), c.DataDir)
}

// A relative --data-dir is relative to the working directory, even when
// the config found there is read from inside it.
func TestLocate_RelativeDataDir(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	t.Setenv(EnvDataDir, "")
	require.NoError(t, os.MkdirAll("rel", 0o700))
	require.NoError(t, os.WriteFile(filepath.Join("rel", "agnx.yaml"), []byte("server:\n  port: 8080\n"), 0o600))
	c, err := Locate("", "rel")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(wd, "rel"), c.DataDir)
	assert.Equal(t, filepath.Join(wd, "rel", "agents"), c.AgentsDir)

	t.Setenv(EnvDataDir, "rel")
	c, err = Locate("", "")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(wd, "rel"), c.DataDir, "$AGNX_LITE_HOME too")
}
