package chats

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

// Routes match gateway and chat type in any case, dm is a private chat,
// and with no match and no default agent the message is refused (Agnx
// drops it).
func TestRouter_AgnxRules(t *testing.T) {
	c, err := config.Parse("duragent.yaml", []byte("routes:\n  - match: {gateway: TELEGRAM, chat_type: Dm}\n    agent: a\n"+
		"  - match: {chat_type: group, chat_id: G}\n    agent: b\n"))
	require.NoError(t, err)
	r := NewRouter(c)
	assert.Equal(t, "a", r.Agent(agents.Inbound{Gateway: "telegram", ChatType: "private", ChatID: "1", SenderID: "1"}))
	assert.Equal(t, "a", r.Agent(agents.Inbound{Gateway: "Telegram", ChatID: "1", SenderID: "1"}))
	assert.Equal(t, "b", r.Agent(agents.Inbound{Gateway: "telegram", ChatType: "GROUP", ChatID: "G"}))
	assert.Empty(t, r.Agent(agents.Inbound{Gateway: "telegram", ChatType: "group", ChatID: "H"}))
	assert.Empty(t, r.Agent(agents.Inbound{Gateway: "discord", ChatType: "dm", ChatID: "1"}))

	_, err = (&Chats{router: r}).Route(agents.Inbound{Gateway: "discord", ChatID: "1"})
	var ae *agents.AccessError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "no route in the config sends this chat to an agent (add a route, or set runtime.default_agent)", ae.Why)
}
