package lite

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
)

// With Telegram disabled (the default) and no plugins, Serve runs no
// gateway.
func TestGateways_NoneByDefault(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	app, err := Open(cfg, &Options{NoSync: true})
	require.NoError(t, err)
	defer app.Close()
	gws, err := buildGateways(app, nil)
	require.NoError(t, err)
	assert.Empty(t, gws)
	var none *TelegramGateway
	assert.True(t, none.LastPoll().IsZero(), "nil-safe")
}

// The Telegram gateway runs in Serve's gateway list: started, serving
// (it polls), refusing to deliver to a chat it does not serve, stopped.
func TestTelegramGateway_InGatewaySet(t *testing.T) {
	tg := tgtest.New(t)
	cfg := crashConfig(t.TempDir())
	cfg.Gateways.Telegram = config.Telegram{Enabled: true, BotToken: tgtest.Token, Allowlist: []int64{42}, APIBaseURL: tg.URL}
	_, err := config.Init(cfg)
	require.NoError(t, err)
	app, err := Open(cfg, &Options{NoSync: true})
	require.NoError(t, err)
	defer app.Close()
	gw, err := NewTelegram(app, telegram.Options{PollTimeout: time.Second})
	require.NoError(t, err)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	started, err := gatewaySet{gw}.start(ctx, log)
	require.NoError(t, err)
	require.Len(t, started, 1)
	assert.Equal(t, "telegram", started[0].Name())
	// The second poll starts once the first has answered.
	tg.Wait(t, "a poll answered", func() bool { return len(tg.Calls("getUpdates")) > 1 })
	assert.False(t, gw.LastPoll().IsZero(), "LastPoll says when")
	require.ErrorIs(t, gw.Deliver(ctx, Outbound{ChatID: "42", Text: "hello"}), ErrNotServed, "no session from Telegram yet")
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	started.stop(stopCtx, log)
	require.Error(t, gw.Deliver(ctx, Outbound{ChatID: "42", Text: "hello"}))
	assert.Empty(t, tg.Calls("sendMessage"))
}
