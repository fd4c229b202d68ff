package lite

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/notify"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// tgApp is an App serving Telegram (a fake Bot API, the model echoing) as
// Serve runs it: the gateway in the App's list, for the deliver path.
func tgApp(t *testing.T, notifyYAML string) (*App, *tgtest.Server, *syncBuffer) {
	t.Helper()
	tg := tgtest.New(t)
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	app, logs := notifyApp(t, notifyYAML, nil)
	app.Config.Gateways.Telegram = config.Telegram{Enabled: true, BotToken: tgtest.Token, Allowlist: []int64{42}, APIBaseURL: tg.URL}
	gw, err := NewTelegram(app, telegram.Options{PollTimeout: time.Second})
	require.NoError(t, err)
	log := slog.New(slog.DiscardHandler)
	started, err := gatewaySet{gw}.start(context.Background(), log)
	require.NoError(t, err)
	app.gateways.set(started)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		started.stop(ctx, log)
	})
	return app, tg, logs
}

// say has chat 42 write text and waits for the echo and the turn's end.
func say(t *testing.T, app *App, tg *tgtest.Server, text string) {
	t.Helper()
	tg.Queue(tgtest.Private(42, text))
	tg.Wait(t, "the echo of "+text, func() bool {
		for _, s := range tg.Texts(42) {
			if s == "echo: "+text {
				return true
			}
		}
		return false
	})
	tg.Wait(t, "the turn to end", func() bool {
		sid, _, err := app.Chats().Current(telegram.GatewayName, "42")
		if err != nil {
			return false
		}
		info, err := app.Loop.Session(context.Background(), sid)
		return err == nil && info.Status == runtime.SessionActive
	})
}

// A notification to a Telegram chat posts a notice into the chat's
// session, which the gateway delivers, once.
func TestAppNotify_ChatOnce(t *testing.T) {
	app, tg, logs := tgApp(t, "")
	say(t, app, tg, "hi")
	app.notify.Notify(notify.Notification{Agent: "assistant", Gateway: telegram.GatewayName, ChatID: "42", Text: "your build is green", Origin: "process:p1"})
	tg.Wait(t, "the notice", func() bool { return len(tg.Texts(42)) == 2 })
	say(t, app, tg, "again")
	assert.Equal(t, []string{"echo: hi", "your build is green", "echo: again"}, tg.Texts(42))
	assert.NotContains(t, logs.String(), "notification to a chat failed")

	sid, _, err := app.Chats().Current(telegram.GatewayName, "42")
	require.NoError(t, err)
	var origins []string
	require.NoError(t, app.Loop.Events(context.Background(), sid, 0, func(e runtime.Event) error {
		if e.Type == runtime.EvAssistant && e.Origin != "" {
			origins = append(origins, e.Origin)
		}
		return nil
	}))
	assert.Equal(t, []string{notify.NoticeOrigin}, origins, "the notice is in the chat's session")
}

// A chat delivery naming a chat the bot never served sends nothing there
// (the log says why); the notification's own chat still gets it. Another
// agent's notice does not enter the chat's session.
func TestAppNotify_ChatNeedsServedChat(t *testing.T) {
	app, tg, logs := tgApp(t, "    deliveries: [{type: chat, gateway: telegram, chat_id: \"77\"}, {type: chat}]\n")
	say(t, app, tg, "hi")
	app.notify.Notify(notify.Notification{Agent: "assistant", Gateway: telegram.GatewayName, ChatID: "42", Text: "only to 42"})
	tg.Wait(t, "the notice", func() bool { return len(tg.Texts(42)) == 2 })
	assert.Equal(t, "only to 42", tg.Texts(42)[1])
	assert.Empty(t, tg.Texts(77))
	assert.Contains(t, logs.String(), "telegram chat 77 has no session yet")

	app.notify.Notify(notify.Notification{Agent: "other", Gateway: telegram.GatewayName, ChatID: "42", Text: "from another agent"})
	app.notify.Notify(notify.Notification{Agent: "assistant", Gateway: telegram.GatewayName, ChatID: "42", Text: "last"})
	tg.Wait(t, "the last notice", func() bool { return len(tg.Texts(42)) == 3 })
	assert.Equal(t, "last", tg.Texts(42)[2], "another agent's notice does not enter the chat's session")
	assert.Contains(t, logs.String(), "talks to agent assistant, not other")
}
