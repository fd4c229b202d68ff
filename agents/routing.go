package agents

import (
	"slices"
	"strings"
)

// Inbound says where a message comes from, for routing and access.
type Inbound struct {
	Gateway string // telegram, http, cli, or a plugin's name
	// Channel is the platform in a plugin's routing (whatsapp, discord);
	// "" means Gateway. Group allowlists match "channel:chat_id".
	Channel string
	// ChatType is dm or private, group, supergroup or channel (any case;
	// "" counts as a direct message); any other type is neither.
	ChatType string
	ChatID   string
	SenderID string
	// Mentioned is true when a group message mentions or replies to the bot.
	Mentioned bool
}

// Group reports whether the message comes from a group chat: chat type
// group, supergroup or channel, in any case.
func (in Inbound) Group() bool {
	switch strings.ToLower(in.ChatType) {
	case "group", "supergroup", "channel":
		return true
	}
	return false
}

// Direct reports whether the message is a direct message: chat type dm or
// private (any case), or none.
func (in Inbound) Direct() bool {
	switch strings.ToLower(in.ChatType) {
	case "", "dm", "private":
		return true
	}
	return false
}

func (in Inbound) channel() string {
	if in.Channel != "" {
		return in.Channel
	}
	return in.Gateway
}

// RouteRule sends the chats it matches to Agent; an empty field matches
// anything, so a rule with no fields is the default route. Gateway and
// ChatType match in any case, as in Agnx, and Agnx's chat type dm matches
// a private chat.
type RouteRule struct {
	Gateway, ChatType, ChatID, SenderID string
	Agent                               string
}

func (r RouteRule) matches(in Inbound) bool {
	ok := func(want, got string) bool { return want == "" || want == got }
	fold := func(want, got string) bool { return want == "" || strings.EqualFold(want, got) }
	chatType := in.ChatType
	if !in.Group() && (strings.EqualFold(r.ChatType, "dm") || strings.EqualFold(r.ChatType, "private")) {
		chatType = r.ChatType // a direct message, whatever the gateway calls it
	}
	return fold(r.Gateway, in.Gateway) && fold(r.ChatType, chatType) && ok(r.ChatID, in.ChatID) && ok(r.SenderID, in.SenderID)
}

// Router is the routing table: the first rule that matches wins; with none
// matching, the default agent, which may be "" (no agent: drop).
type Router struct {
	rules []RouteRule
	def   string
}

// NewRouter returns a router over rules (in order) and a default agent.
func NewRouter(rules []RouteRule, defaultAgent string) *Router {
	return &Router{rules: slices.Clone(rules), def: defaultAgent}
}

// Agent names the agent for a message.
func (r *Router) Agent(in Inbound) string {
	for _, rule := range r.rules {
		if rule.matches(in) {
			return rule.Agent
		}
	}
	return r.def
}
