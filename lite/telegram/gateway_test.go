package telegram_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
)

func TestGateway_AnswersAllowedUser(t *testing.T) {
	r := newRig(t, nil)
	r.say("hello there")
	m := r.waitText(owner, "echo: hello there")
	assert.Equal(t, "HTML", m.ParseMode)
	r.waitIdle("42")
	assert.Len(t, r.tg.Chat(owner), 1, "the reply streams into one message")
	assert.Equal(t, []string{"hello there"}, r.userMessages("42"))
	assert.NotEmpty(t, r.tg.Calls("sendChatAction"), "typing is shown")
	assert.False(t, r.gw.LastPoll().IsZero())
}

func TestGateway_RefusesStranger(t *testing.T) {
	r := newRig(t, nil)
	r.tg.Queue(tgtest.Private(77, "let me in"))
	r.tg.Queue(tgtest.Private(77, "please"))
	r.waitConsumed()
	r.waitContains(77, "private bot")
	assert.Len(t, r.tg.Chat(77), 1, "one refusal, rate-limited")
	assert.Empty(t, r.llm.Requests(), "nothing reaches the agent")
	assert.Empty(t, r.userMessages("77"))
}

func TestGateway_NoAllowlistTellsTheID(t *testing.T) {
	r := newRig(t, nil, withAllowlist())
	r.say("hi")
	m := r.waitContains(owner, "Your Telegram user id is 42")
	assert.Contains(t, m.Plain(), "gateways.telegram.allowlist: [42]")
	assert.Empty(t, r.llm.Requests())
	assert.Contains(t, r.log.String(), "gateways.telegram.allowlist: [42]", "the log says it too")
}

// In a group (mention mode, silent context buffer) a message that does
// not address the bot starts no turn; it is kept as a silent_message and
// shown to the model as recent group conversation when it is addressed.
// Group text is prefixed with the sender's name.
func TestGateway_GroupNeedsMention(t *testing.T) {
	r := newRig(t, nil)
	const group = -100123
	r.tg.Queue(tgtest.Group(group, owner, "chatting among ourselves"))
	r.tg.Queue(tgtest.Mention(tgtest.Group(group, owner, "@"+tgtest.BotUsername+" what time is it"), tgtest.BotUsername))
	r.waitText(group, "echo: user: @"+tgtest.BotUsername+" what time is it")
	r.waitIdle("-100123")
	reqs := r.llm.Requests()
	require.Len(t, reqs, 1, "the message without a mention starts no turn")
	assert.Contains(t, reqs[0].Messages[0].Content, "Recent group conversation before you were mentioned:\n\nuser: chatting among ourselves\n")
	assert.Equal(t, []string{"user: @" + tgtest.BotUsername + " what time is it"}, r.userMessages("-100123"))
	assert.Len(t, r.tg.Chat(group), 1)
}

func TestGateway_ReplyToBotIsAMention(t *testing.T) {
	r := newRig(t, nil)
	const group = -100124
	u := tgtest.Group(group, owner, "and tomorrow?")
	tgtest.Msg(u)["reply_to_message"] = map[string]any{"message_id": 1, "date": 1,
		"from": map[string]any{"id": tgtest.BotID, "is_bot": true, "first_name": "Agnx"},
		"chat": map[string]any{"id": group, "type": "supergroup"},
		"text": "earlier answer"}
	r.tg.Queue(u)
	r.waitText(group, "echo: user: and tomorrow?")
}

func TestGateway_VoiceNotSupported(t *testing.T) {
	r := newRig(t, nil)
	u := tgtest.Private(owner, "")
	delete(tgtest.Msg(u), "text")
	tgtest.Msg(u)["voice"] = map[string]any{"file_id": "v1", "file_unique_id": "uv1", "duration": 2, "mime_type": "audio/ogg"}
	r.tg.Queue(u)
	r.waitContains(owner, "Voice messages are not supported yet")
	r.waitConsumed()
	assert.Empty(t, r.llm.Requests())
	require.Empty(t, r.userMessages("42"))
}
