package agents

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRouter_FirstMatchWins(t *testing.T) {
	r := NewRouter([]RouteRule{
		{Gateway: "telegram", ChatType: "group", ChatID: "-100123", Agent: "helper"},
		{SenderID: "42", Agent: "bob"},
		{Gateway: "telegram", Agent: "tg"},
		{Agent: "catchall"},
	}, "assistant")
	tests := []struct {
		in   Inbound
		want string
	}{
		{Inbound{Gateway: "telegram", ChatType: "group", ChatID: "-100123", SenderID: "42"}, "helper"},
		{Inbound{Gateway: "telegram", ChatType: "private", ChatID: "42", SenderID: "42"}, "bob"},
		{Inbound{Gateway: "http", SenderID: "42"}, "bob"},
		{Inbound{Gateway: "telegram", ChatType: "private", ChatID: "7", SenderID: "7"}, "tg"},
		{Inbound{Gateway: "discord", ChatID: "x"}, "catchall"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, r.Agent(tt.in), "%+v", tt.in)
	}
	assert.Equal(t, "assistant", NewRouter(nil, "assistant").Agent(Inbound{Gateway: "x"}), "no rules: the default agent")
}

func TestAgent_Admits(t *testing.T) {
	dm := Inbound{Gateway: "telegram", ChatType: "private", ChatID: "5", SenderID: "5"}
	group := Inbound{Gateway: "telegram", ChatType: "supergroup", ChatID: "-100", SenderID: "5"}
	mentioned := group
	mentioned.Mentioned = true

	open := &Agent{Name: "a"}
	ok, _ := open.Admits(dm)
	assert.True(t, ok, "open by default")
	ok, why := open.Admits(group)
	assert.False(t, ok)
	assert.Contains(t, why, "only when mentioned")
	ok, _ = open.Admits(mentioned)
	assert.True(t, ok)

	strict := &Agent{Name: "a", Access: Access{
		DM:     AccessRule{Policy: "allowlist", Allowlist: []string{"telegram:9"}},
		Groups: GroupAccess{Policy: "allowlist", Allowlist: []string{"telegram:-100"}, Activation: "always"},
	}}
	ok, why = strict.Admits(dm)
	assert.False(t, ok)
	assert.Equal(t, "agent a does not take direct messages from telegram:5 (spec.access.dm)", why)
	dm.SenderID = "9"
	ok, _ = strict.Admits(dm)
	assert.True(t, ok)
	ok, _ = strict.Admits(group)
	assert.True(t, ok, "the group is allow-listed and activation is always")
	group.ChatID = "-200"
	ok, _ = strict.Admits(group)
	assert.False(t, ok)

	closed := &Agent{Name: "a", Access: Access{DM: AccessRule{Policy: "disabled"}}}
	ok, _ = closed.Admits(dm)
	assert.False(t, ok)
}

func TestLoad_AccessValidation(t *testing.T) {
	dir := t.TempDir()
	_, err := WriteTemplate(dir, "a")
	assert.NoError(t, err)
	p := dir + "/a/agent.yaml"
	data, _ := os.ReadFile(p)
	body := strings.Replace(string(data), "  tools:", "  access:\n    dm: {policy: maybe}\n  tools:", 1)
	assert.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	_, err = Load(dir + "/a")
	assert.ErrorContains(t, err, `spec.access.dm.policy "maybe" is not one of open, allowlist, disabled`)
	assert.Regexp(t, `agent.yaml:\d+: `, err.Error())
}
