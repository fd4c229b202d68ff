package lite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

func TestApp_Route(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	_, err = agents.WriteTemplate(cfg.AgentsDir, "family")
	require.NoError(t, err)
	yaml := filepath.Join(cfg.AgentsDir, "family", "agent.yaml")
	data, _ := os.ReadFile(yaml)
	require.NoError(t, os.WriteFile(yaml, []byte(strings.Replace(string(data), "  tools:",
		"  access:\n    dm: {policy: allowlist, allowlist: [\"telegram:7\"]}\n  tools:", 1)), 0o644))
	cfg.Routes = []config.Route{{Match: config.RouteMatch{Gateway: "telegram"}, Agent: "family"}, {Agent: "assistant"}}
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()

	name, err := app.Route(agents.Inbound{Gateway: "telegram", ChatType: "private", ChatID: "7", SenderID: "7"})
	require.NoError(t, err)
	assert.Equal(t, "family", name)

	_, err = app.Route(agents.Inbound{Gateway: "telegram", ChatType: "private", ChatID: "8", SenderID: "8"})
	var ae *agents.AccessError
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, err.Error(), "does not take direct messages from telegram:8")

	name, err = app.Route(agents.Inbound{Gateway: "plugin-x", SenderID: "8"})
	require.NoError(t, err)
	assert.Equal(t, "assistant", name)
}

// Routes match gateway and chat type in any case, dm is a private chat,
// and with no match and no default agent the message is refused (Agnx
// drops it).
func TestRouter_AgnxRules(t *testing.T) {
	c, err := config.Parse("duragent.yaml", []byte("routes:\n  - match: {gateway: TELEGRAM, chat_type: Dm}\n    agent: a\n"+
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
