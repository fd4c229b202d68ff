package lite

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartTelegram_Disabled(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	_, err := Init(cfg)
	require.NoError(t, err)
	app, err := Open(cfg, &Options{NoSync: true})
	require.NoError(t, err)
	defer app.Close()
	tg, err := StartTelegram(context.Background(), app, nil)
	require.NoError(t, err)
	assert.Nil(t, tg)
	assert.True(t, tg.LastPoll().IsZero(), "nil-safe")
	tg.Stop()
	var none *TelegramGateway
	assert.True(t, none.LastPoll().IsZero(), "nil-safe")
}
