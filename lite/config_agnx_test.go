package lite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Agnx's `duragent init` template loads unchanged: only host and the
// sessions' ttl (Agnx's week) differ from the defaults, and no gateway runs.
func TestParseConfig_AgnxInitTemplate(t *testing.T) {
	c, err := LoadConfig("testdata/agnx/duragent.yaml")
	require.NoError(t, err)
	want := DefaultConfig()
	want.Server.Host = "0.0.0.0"
	want.Sessions.TTLHours = AgnxTTLHours
	want.File, want.doc, want.RouteFallback = c.File, c.doc, ""
	assert.Equal(t, want, c)
	assert.Empty(t, c.Warnings)
}

// Every key of a duragent.yaml means what it means to Agnx.
func TestParseConfig_AgnxFull(t *testing.T) {
	t.Setenv("AGNX_T_API_TOKEN", "api-token-0123456789")
	t.Setenv("AGNX_T_TELEGRAM", "123:abc")
	c, err := LoadConfig("testdata/agnx/full.yaml")
	require.NoError(t, err)
	assert.Equal(t, "./state", c.DataDir)
	assert.Equal(t, "./my-agents", c.AgentsDir)
	assert.Equal(t, ServerConfig{Host: "127.0.0.1", Port: 9090, RequestTimeoutSeconds: 120, IdleTimeoutSeconds: 60,
		KeepAliveIntervalSeconds: 20, MaxConnections: 1024, MaxConnectionsPerClient: 16, MaxStreams: 128,
		APIToken: "api-token-0123456789"}, c.Server)
	assert.Equal(t, SessionsConfig{TTLHours: 168, Compaction: "archive"}, c.Sessions)
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

func TestParseConfig_AgnxEdges(t *testing.T) {
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
		c, err := ParseConfig("duragent.yaml", []byte(src))
		require.NoError(t, err, src)
		check(c)
	}
	_, err := ParseConfig("duragent.yaml", []byte("sandbox:\n  mode: docker\n"))
	assert.EqualError(t, err, "duragent.yaml:2: sandbox.mode docker is not supported by agnx-lite: use bubblewrap (tools confined, no container daemon) or trust")

	c, err := ParseConfig("duragent.yaml", []byte("gateways:\n  external:\n    - {name: x, command: y}\nroutes:\n  - match: {gateway: x}\n    agent: a\n"))
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
	assert.Equal(t, []Check{{Name: "config", Status: "warn", Detail: c.Warnings[0],
		Fix: "remove or correct the key, or leave it if the file is shared with Agnx"}}, configChecks(c))
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

// Routes match gateway and chat type in any case, dm is a private chat,
// and with no match and no default agent the message is refused (Agnx
// drops it).
func TestRouter_AgnxRules(t *testing.T) {
	c, err := ParseConfig("duragent.yaml", []byte("routes:\n  - match: {gateway: TELEGRAM, chat_type: Dm}\n    agent: a\n"+
		"  - match: {chat_type: group, chat_id: G}\n    agent: b\n"))
	require.NoError(t, err)
	r := newRouter(c)
	assert.Equal(t, "a", r.Agent(agents.Inbound{Gateway: "telegram", ChatType: "private", ChatID: "1", SenderID: "1"}))
	assert.Equal(t, "a", r.Agent(agents.Inbound{Gateway: "Telegram", ChatID: "1", SenderID: "1"}))
	assert.Equal(t, "b", r.Agent(agents.Inbound{Gateway: "telegram", ChatType: "GROUP", ChatID: "G"}))
	assert.Empty(t, r.Agent(agents.Inbound{Gateway: "telegram", ChatType: "group", ChatID: "H"}))
	assert.Empty(t, r.Agent(agents.Inbound{Gateway: "discord", ChatType: "dm", ChatID: "1"}))

	app := &App{router: r}
	_, err = app.Route(agents.Inbound{Gateway: "discord", ChatID: "1"})
	var ae *agents.AccessError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "no route in the config sends this chat to an agent (add a route, or set runtime.default_agent)", ae.Why)
}

// doctor shows each config warning as a warn line of the config section.
func TestDoctor_ConfigWarnings(t *testing.T) {
	c, err := ParseConfig("duragent.yaml", []byte("world_memory:\n  path: m\nflavour: x\nservices:\n  session:\n    path: s\n"))
	require.NoError(t, err)
	checks := configChecks(c)
	require.Len(t, checks, 3, "world_memory.path is honoured: no warning")
	assert.Equal(t, Check{Name: "config", Status: "ok", Detail: "duragent.yaml is valid"}, checks[0])
	assert.Equal(t, "warn", checks[1].Status)
	assert.Equal(t, `duragent.yaml:3: unknown field "flavour" (ignored)`, checks[1].Detail)
	assert.Contains(t, checks[2].Detail, "duragent.yaml:6: services.session.path is accepted")
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
