package agents

import (
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
