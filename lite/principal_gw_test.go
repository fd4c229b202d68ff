package lite

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Each gateway records whom its sessions speak for: a Telegram private
// chat its user, a group the group, a plugin's chat the chat, a hook
// itself; a chat's session started again after an expiry keeps the chat's.
func TestGateways_RecordThePrincipal(t *testing.T) {
	e := newHookEnv(t, nil)
	ctx := context.Background()
	principal := func(sid string) string {
		t.Helper()
		info, err := e.app.Loop.Session(ctx, sid)
		require.NoError(t, err)
		return info.Principal.String()
	}
	sids := map[string]string{}
	for _, tc := range []struct {
		in   agents.Inbound
		want string
	}{
		{agents.Inbound{Gateway: "telegram", ChatType: "private", ChatID: "123"}, "telegram:user:123"},
		{agents.Inbound{Gateway: "telegram", ChatType: "supergroup", ChatID: "-100555"}, "telegram:group:-100555"},
		{agents.Inbound{Gateway: "telegram", ChatID: "-100556"}, "telegram:group:-100556"},
		{agents.Inbound{Gateway: "whatsapp", Channel: "whatsapp", ChatType: "dm", ChatID: "+4917"}, "plugin:whatsapp:+4917"},
	} {
		sid, err := e.app.Chats().NewSession(ctx, tc.in, "assistant")
		require.NoError(t, err)
		assert.Equal(t, tc.want, principal(sid), "%+v", tc.in)
		sids[tc.want] = sid
	}

	a := e.github("d-1")
	require.Equal(t, http.StatusAccepted, a.status, a.body)
	assert.Equal(t, "webhook:github", principal(a.body["session_id"].(string)))
	b := e.post("ci", `{"status": "green"}`, map[string]string{"Authorization": "Bearer " + hookToken})
	require.Equal(t, http.StatusAccepted, b.status, b.body)
	assert.Equal(t, "telegram:user:42", principal(b.body["session_id"].(string)), "a hook into a chat starts the chat's session")
	e.userMessages(b.body["session_id"].(string))

	// An expired group session, started again for a schedule's message
	// (no chat type known then), is still the group's.
	old := sids["telegram:group:-100555"]
	require.NoError(t, e.app.Loop.EndSession(ctx, old, "timeout"))
	sid, _, err := e.app.Chats().Live(ctx, "telegram", "-100555")
	require.NoError(t, err)
	require.NotEqual(t, old, sid)
	assert.Equal(t, "telegram:group:-100555", principal(sid))
}
