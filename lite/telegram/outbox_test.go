package telegram_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
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

// A reply produced while the gateway is stopped (another client sent the
// message) is delivered once when it starts again.
func TestOutbox_ReplyWhileStoppedDeliveredOnceAtStart(t *testing.T) {
	r := newRig(t, nil)
	r.say("first")
	r.waitText(owner, "echo: first")
	r.waitIdle("42")
	ctx := context.Background()
	require.NoError(t, r.gw.Stop(ctx))

	sid, _, err := r.app.Chats().Current(telegram.GatewayName, "42")
	require.NoError(t, err)
	sub, err := r.app.Loop.Follow(ctx, sid, runtime.Live)
	require.NoError(t, err)
	_, err = r.app.Loop.Send(ctx, sid, runtime.Input{Content: "from the web"})
	require.NoError(t, err)
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd {
			break
		}
	}
	sub.Close()
	assert.Equal(t, []string{"echo: first"}, r.tg.Texts(owner), "nobody delivered it yet")

	gw, err := lite.NewTelegram(r.app, telegram.Options{PollTimeout: time.Second, Sleep: r.sleep})
	require.NoError(t, err)
	require.NoError(t, gw.Start(ctx))
	t.Cleanup(func() { assert.NoError(t, gw.Stop(ctx)) })
	r.waitText(owner, "echo: from the web")
	r.say("next")
	r.waitText(owner, "echo: next")
	r.waitIdle("42")
	assert.Equal(t, []string{"echo: first", "echo: from the web", "echo: next"}, r.tg.Texts(owner))
}

// A slow Telegram during a long tool turn: the watcher falls behind the
// turn (far more events than a subscriber's queue holds) and catches up
// from the log; every step reaches the chat once, in order.
func TestOutbox_SlowTelegramLongToolTurn(t *testing.T) {
	const rounds = 40
	var replies []llmtest.Reply
	var want []string
	for i := 1; i <= rounds; i++ {
		text := fmt.Sprintf("step %d of the plan", i)
		replies = append(replies, llmtest.Reply{Text: text,
			ToolCalls: []llmtest.ToolCall{{ID: fmt.Sprintf("call-%d", i), Name: "list_dir", Arguments: "{}"}}})
		want = append(want, text)
	}
	replies = append(replies, llmtest.Reply{Text: "all done"})
	want = append(want, "all done")
	r := newRig(t, llmtest.Script(replies...))
	spec := filepath.Join(r.cfg.AgentsDir, "assistant", "agent.yaml")
	writeFile(t, spec, strings.Replace(readFile(t, spec), "max_tool_iterations: 10", "max_tool_iterations: 60", 1))
	r.tg.Slow(50 * time.Millisecond)

	r.say("go")
	r.tg.Wait(t, "every step", func() bool {
		texts := r.tg.Texts(owner)
		return len(texts) >= len(want) && texts[len(texts)-1] == "all done"
	})
	r.waitIdle("42")
	assert.Equal(t, want, r.tg.Texts(owner), "each step once, in order")
	assert.Len(t, r.llm.Requests(), rounds+1)
}
