package lite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

func TestChats(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	ctx := context.Background()
	in := agents.Inbound{Gateway: "telegram", ChatType: "private", ChatID: "7", SenderID: "7"}

	_, _, err = app.Chats().Current("telegram", "7")
	assert.ErrorIs(t, err, chats.ErrNoChat)
	sid, agent, err := app.Chats().Session(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, "assistant", agent)
	again, _, err := app.Chats().Session(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, sid, again, "one session per chat")

	fresh, err := app.Chats().NewSession(ctx, in, "assistant")
	require.NoError(t, err)
	assert.NotEqual(t, sid, fresh)
	require.NoError(t, app.Close())

	app, err = Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	got, _, err := app.Chats().Session(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, fresh, got, "the mapping survives a restart")
}

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

	name, err := app.Chats().Route(agents.Inbound{Gateway: "telegram", ChatType: "private", ChatID: "7", SenderID: "7"})
	require.NoError(t, err)
	assert.Equal(t, "family", name)

	_, err = app.Chats().Route(agents.Inbound{Gateway: "telegram", ChatType: "private", ChatID: "8", SenderID: "8"})
	var ae *agents.AccessError
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, err.Error(), "does not take direct messages from telegram:8")

	name, err = app.Chats().Route(agents.Inbound{Gateway: "plugin-x", SenderID: "8"})
	require.NoError(t, err)
	assert.Equal(t, "assistant", name)
}
