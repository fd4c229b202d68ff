package telegram_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// A chat's first message that never reached a model (here the model is
// missing) is answered with the error, and leaves no session behind; once
// the model is there, the next message starts a session that is kept.
func TestGateway_NoSessionForAFailedFirstTurn(t *testing.T) {
	var pulled atomic.Bool
	r := newRig(t, func(rq llmtest.RecordedRequest) llmtest.Reply {
		if pulled.Load() {
			return llmtest.Reply{Text: "echo: " + rq.LastUser()}
		}
		return llmtest.Reply{Status: 404, ErrorMessage: `model "qwen3:1.7b" not found, try pulling it first`}
	})
	r.say("hello")
	r.waitContains(owner, "ollama pull")
	sid, _, err := r.app.Chats().Current(telegram.GatewayName, "42")
	require.NoError(t, err)
	r.tg.Wait(t, "the session to be removed", func() bool {
		_, err := r.app.Loop.Session(context.Background(), sid)
		return err != nil
	})
	_, err = r.app.Loop.Session(context.Background(), sid)
	assert.ErrorIs(t, err, runtime.ErrSessionNotFound)

	pulled.Store(true)
	r.say("again")
	r.waitText(owner, "echo: again")
	r.waitIdle("42")
	// The watcher removes the outbox record just after the session, on
	// its own goroutine (a crash between the two leaves only a stale
	// record): looked at once the next turn is over, not the moment the
	// session is seen gone (under qemu on a loaded box it came later).
	data, err := r.app.Chats().KV("telegram/out/" + sid)
	require.NoError(t, err)
	assert.Nil(t, data, "its outbox record went with it")
	assert.Equal(t, []string{"again"}, r.userMessages("42"))
	next, _, err := r.app.Chats().Current(telegram.GatewayName, "42")
	require.NoError(t, err)
	assert.NotEqual(t, sid, next)
}
