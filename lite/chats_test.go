package lite

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
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
	assert.ErrorIs(t, err, ErrNoChat)
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
