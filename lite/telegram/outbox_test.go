package telegram_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// A reply finished while the gateway was down is delivered when it comes
// back, once.
func TestOutbox_PendingReplyDeliveredAfterRestart(t *testing.T) {
	called, release := make(chan struct{}, 1), make(chan struct{})
	r := newRig(t, func(req llmtest.RecordedRequest) llmtest.Reply {
		called <- struct{}{}
		<-release
		return llmtest.Echo()(req)
	})
	r.say("while you were away")
	<-called
	sid, _, err := r.app.Chats().Current(telegram.GatewayName, "42")
	require.NoError(t, err)
	sub, err := r.app.Loop.Subscribe(context.Background(), sid)
	require.NoError(t, err)
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	require.Error(t, r.gw.Stop(stopped), "the gateway goes away mid-turn and says a reply is left")
	close(release)
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd {
			break
		}
	}
	sub.Close()
	assert.Empty(t, r.tg.Texts(owner), "nobody delivered it yet")

	gw, err := lite.NewTelegram(r.app, telegram.Options{PollTimeout: time.Second, Sleep: r.sleep})
	require.NoError(t, err)
	require.NoError(t, gw.Start(context.Background()))
	t.Cleanup(func() { assert.NoError(t, gw.Stop(context.Background())) })
	r.waitText(owner, "echo: while you were away")
	r.say("next")
	r.waitText(owner, "echo: next")
	assert.Equal(t, []string{"echo: while you were away", "echo: next"}, r.tg.Texts(owner))
}
