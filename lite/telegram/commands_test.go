package telegram_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

func TestCommands_StartNewResetStatus(t *testing.T) {
	r := newRig(t, nil)
	r.say("/start")
	m := r.waitContains(owner, "You are talking to the agent assistant")
	assert.Contains(t, m.Plain(), "/new")

	r.say("remember me")
	r.waitText(owner, "echo: remember me")
	r.waitIdle("42")
	first, _, err := r.app.Chats().Current(telegram.GatewayName, "42")
	require.NoError(t, err)

	r.say("/status")
	st := r.waitContains(owner, "Session: "+first)
	assert.Contains(t, st.Plain(), "Agent: assistant")
	assert.Contains(t, st.Plain(), "Model: ollama/qwen3:1.7b")
	assert.Contains(t, st.Plain(), "Turns: 1")
	assert.Contains(t, st.Plain(), "Tokens: ")

	r.say("/new")
	r.waitContains(owner, "A fresh conversation with assistant has started; the old one is kept.")
	second, _, err := r.app.Chats().Current(telegram.GatewayName, "42")
	require.NoError(t, err)
	assert.NotEqual(t, first, second)

	r.say("/reset@" + "agnx_test_bot")
	r.tg.Wait(t, "a second fresh conversation", func() bool {
		n := 0
		for _, s := range r.tg.Texts(owner) {
			if strings.HasPrefix(s, "A fresh conversation") {
				n++
			}
		}
		return n == 2
	})
	third, _, err := r.app.Chats().Current(telegram.GatewayName, "42")
	require.NoError(t, err)
	assert.NotEqual(t, second, third)

	r.say("after reset")
	r.waitText(owner, "echo: after reset")
	assert.Equal(t, []string{"after reset"}, r.userMessages("42"), "the new session starts empty")
}

func TestCommands_Agent(t *testing.T) {
	r := newRig(t, nil)
	_, err := agents.WriteTemplate(r.cfg.AgentsDir, "helper")
	require.NoError(t, err)
	r.say("/agent nobody")
	r.waitContains(owner, "/agent failed")
	r.say("/agent helper")
	r.waitContains(owner, "You are now talking to helper")
	_, agent, err := r.app.Chats().Current(telegram.GatewayName, "42")
	require.NoError(t, err)
	assert.Equal(t, "helper", agent)
	r.say("/agent")
	r.waitContains(owner, "You are talking to helper.")
}

func TestCommands_AgentRespectsAccess(t *testing.T) {
	r := newRig(t, nil)
	_, err := agents.WriteTemplate(r.cfg.AgentsDir, "private")
	require.NoError(t, err)
	path := r.cfg.AgentsDir + "/private/agent.yaml"
	writeFile(t, path, strings.Replace(readFile(t, path), "  tools:", "  access:\n    dm: {policy: allowlist, allowlist: [\"telegram:1\"]}\n  tools:", 1))
	r.say("/agent private")
	r.waitContains(owner, "Sorry, I cannot do that here")
	_, _, err = r.app.Chats().Current(telegram.GatewayName, "42")
	assert.Error(t, err, "no session was started")
}

func TestCommands_Cancel(t *testing.T) {
	h := func(req llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(req.LastUser(), "slow") {
			return llmtest.Reply{Text: "thinking very hard about it", Fault: llmtest.Stall, FaultAfter: 2}
		}
		return llmtest.Echo()(req)
	}
	r := newRig(t, h)
	r.say("/cancel")
	r.waitText(owner, "Nothing is running.")
	r.say("a slow question")
	r.waitContains(owner, "thinking") // the streamed preview
	r.say("/cancel")
	r.waitText(owner, "Cancelled.")
	r.waitIdle("42")
	r.say("quick one")
	r.waitText(owner, "echo: quick one")
}

// /compact summarises the chat's older messages through the agent's
// model, says how much room it made, and refuses nothing it need not.
func TestCommands_Compact(t *testing.T) {
	r := newRig(t, func(req llmtest.RecordedRequest) llmtest.Reply {
		if len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You summarise a conversation") {
			return llmtest.Reply{Text: "the user said one"}
		}
		return llmtest.Echo()(req)
	})
	r.say("/compact")
	r.waitText(owner, "No conversation yet: send a message to start one.")
	one := "one" + strings.Repeat(" and more", 100)
	r.say(one)
	r.waitText(owner, "echo: "+one)
	r.waitIdle("42")
	r.say("/compact")
	r.waitText(owner, "Nothing to compact yet: the conversation is a single exchange.")
	r.say("two")
	r.waitText(owner, "echo: two")
	r.waitIdle("42")
	r.say("/compact")
	m := r.waitContains(owner, "Summarised the older messages (about ")
	assert.Contains(t, m.Plain(), "they stay in the session's log")
}
