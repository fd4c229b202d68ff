package telegram_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite"
)

// Deliver reaches a chat that talked to an agent through the gateway,
// formatted and split as replies are.
func TestDeliver_ServedChat(t *testing.T) {
	r := newRig(t, nil)
	var _ lite.Gateway = r.gw
	assert.Equal(t, "telegram", r.gw.Name())
	r.say("hi")
	r.waitText(owner, "echo: hi")
	r.waitIdle("42")

	ctx := context.Background()
	require.NoError(t, r.gw.Deliver(ctx, lite.Outbound{ChatID: "42", Text: "**reminder**: water the plants"}))
	m := r.waitText(owner, "reminder: water the plants")
	assert.Equal(t, "HTML", m.ParseMode)
	assert.Equal(t, "<b>reminder</b>: water the plants", m.Text)

	para := strings.Repeat("long news ", 300) // 3,000 characters
	require.NoError(t, r.gw.Deliver(ctx, lite.Outbound{ChatID: "42", Text: para + "\n\n" + para}))
	texts := r.tg.Texts(owner)
	require.Len(t, texts, 4, "the reply, the reminder, and the news in two messages")
	assert.Equal(t, strings.TrimSpace(para), texts[2])
	assert.Equal(t, strings.TrimSpace(para), texts[3])
}

// A chat that never talked to an agent through the gateway is not served,
// nor one that is not a Telegram chat id; nothing is sent.
func TestDeliver_UnknownChatNotServed(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	err := r.gw.Deliver(ctx, lite.Outbound{ChatID: "77", Text: "hello stranger"})
	require.ErrorIs(t, err, lite.ErrNotServed)
	require.ErrorIs(t, r.gw.Deliver(ctx, lite.Outbound{ChatID: "not-a-chat", Text: "hello"}), lite.ErrNotServed)
	assert.Empty(t, r.tg.Calls("sendMessage"), "nothing was sent")
}

// A stopped gateway delivers nothing and says so.
func TestDeliver_StoppedGatewayRefuses(t *testing.T) {
	r := newRig(t, nil)
	r.say("hi")
	r.waitText(owner, "echo: hi")
	r.waitIdle("42")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, r.gw.Stop(ctx))
	err := r.gw.Deliver(ctx, lite.Outbound{ChatID: "42", Text: "too late"})
	require.Error(t, err)
	assert.NotErrorIs(t, err, lite.ErrNotServed)
	assert.Equal(t, []string{"echo: hi"}, r.tg.Texts(owner))
}
