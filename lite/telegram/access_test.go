package telegram_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// setAccess writes spec.access into the default agent.
func (r *rig) setAccess(access string) {
	r.t.Helper()
	spec := filepath.Join(r.cfg.AgentsDir, "assistant", "agent.yaml")
	before, err := os.Stat(spec)
	require.NoError(r.t, err)
	body := regexp.MustCompile(`(?m)^  access:\n(^    .*\n)*`).ReplaceAllString(readFile(r.t, spec), "")
	writeFile(r.t, spec, strings.Replace(body, "  tools:", "  access:\n"+access+"  tools:", 1))
	later := before.ModTime().Add(time.Second) // an edit the agent cache sees, however coarse the clock
	require.NoError(r.t, os.Chtimes(spec, later, later))
}

// events lists the chat's session's durable events of type typ.
func (r *rig) events(chat string, typ runtime.EventType) []runtime.Event {
	sid, _, err := r.app.Chats().Current(telegram.GatewayName, chat)
	if err != nil {
		return nil
	}
	var out []runtime.Event
	require.NoError(r.t, r.app.Loop.Events(context.Background(), sid, 0, func(e runtime.Event) error {
		if e.Type == typ {
			out = append(out, e)
		}
		return nil
	}))
	return out
}

// The agent's access is checked before a command is answered and before
// a session is created (the parent checks after).
func TestAccess_CheckedBeforeCommands(t *testing.T) {
	r := newRig(t, nil)
	r.setAccess("    dm: {policy: allowlist, allowlist: [\"7\"]}\n")
	r.say("/status")
	r.waitContains(owner, "Sorry, I cannot take this message here: agent assistant does not take direct messages from telegram:42")
	r.say("/reset")
	r.say("hello")
	r.waitConsumed()
	_, _, err := r.app.Chats().Current(telegram.GatewayName, "42")
	assert.ErrorIs(t, err, chats.ErrNoChat, "no session was created")
	assert.Empty(t, r.llm.Requests())
	assert.Len(t, r.tg.Chat(owner), 1, "one refusal, rate-limited")
}

// A passive group member's messages are stored without an answer, and
// have no commands.
func TestAccess_GroupPassiveSender(t *testing.T) {
	r := newRig(t, nil)
	const group = -100555
	r.setAccess("    groups:\n      sender_overrides: {\"42\": passive}\n      activation: always\n")
	r.tg.Queue(tgtest.Group(group, owner, "I only listen"))
	r.tg.Queue(tgtest.Group(group, owner, "/status"))
	r.waitConsumed()
	assert.Equal(t, []string{"user: I only listen"}, r.userMessages("-100555"))
	assert.True(t, r.events("-100555", runtime.EvUserMessage)[0].Passive)
	assert.Empty(t, r.llm.Requests(), "no turn")
	assert.Empty(t, r.tg.Chat(group), "no answer, no command")
}

// A blocked group member's messages are dropped: nothing stored, no
// session, no answer, even when they mention the bot.
func TestAccess_GroupBlockedSender(t *testing.T) {
	r := newRig(t, nil)
	const group = -100556
	r.setAccess("    groups:\n      sender_default: block\n")
	r.tg.Queue(tgtest.Mention(tgtest.Group(group, owner, "@"+tgtest.BotUsername+" hi"), tgtest.BotUsername))
	r.waitConsumed()
	_, _, err := r.app.Chats().Current(telegram.GatewayName, "-100556")
	assert.ErrorIs(t, err, chats.ErrNoChat)
	assert.Empty(t, r.tg.Chat(group))
	assert.Empty(t, r.llm.Requests())
}

// Messages that arrive while the chat's turn runs make one next turn,
// joined by newlines (queue mode batch, the default).
func TestAccess_QueueBatchesBehindATurn(t *testing.T) {
	gate := make(chan struct{})
	h := func(req llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(req.LastUser(), "first") {
			<-gate
		}
		return llmtest.Echo()(req)
	}
	r := newRig(t, h)
	r.say("first")
	r.tg.Wait(t, "the first turn to run", func() bool { return len(r.llm.Requests()) == 1 })
	r.say("second")
	r.say("third")
	r.waitConsumed()
	assert.Equal(t, []string{"first"}, r.userMessages("42"), "the others wait in the queue")
	close(gate)
	r.waitText(owner, "echo: second\nthird")
	assert.Equal(t, []string{"first", "second\nthird"}, r.userMessages("42"))
}

// Messages waiting behind a running answer are handed to the runtime at
// a clean stop: the next turn has them, after the restart too.
func TestAccess_QueueHandedOnAtStop(t *testing.T) {
	gate := make(chan struct{})
	h := func(req llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(req.LastUser(), "first") {
			<-gate
		}
		return llmtest.Echo()(req)
	}
	r := newRig(t, h)
	r.say("first")
	r.tg.Wait(t, "the first turn to run", func() bool { return len(r.llm.Requests()) == 1 })
	r.say("second")
	r.waitConsumed()
	assert.Equal(t, []string{"first"}, r.userMessages("42"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- r.gw.Stop(ctx) }()
	r.tg.Wait(t, "the waiting message to be stored", func() bool { return len(r.userMessages("42")) == 2 })
	close(gate)
	<-stopped
	assert.Equal(t, []string{"first", "second"}, r.userMessages("42"))
}
