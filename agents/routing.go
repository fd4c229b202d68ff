package agents

import (
	"fmt"
	"slices"
	"strings"
)

// Inbound says where a message comes from, for routing and access.
type Inbound struct {
	Gateway  string // telegram, http, cli, or a plugin's name
	ChatType string // private, group, supergroup, channel ("" counts as private)
	ChatID   string
	SenderID string
	// Mentioned is true when a group message mentions or replies to the bot.
	Mentioned bool
}

// Group reports whether the message comes from a group chat.
func (in Inbound) Group() bool {
	return strings.EqualFold(in.ChatType, "group") || strings.EqualFold(in.ChatType, "supergroup") || strings.EqualFold(in.ChatType, "channel")
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

// AccessError is a message an agent's access rules refuse; Why is one
// sentence saying so, for the person who sent it. Every gateway reports
// a refusal with it.
type AccessError struct{ Why string }

func (e *AccessError) Error() string { return e.Why }

// Admit is Admits as an error: nil, or an *AccessError.
func (a *Agent) Admit(in Inbound) error {
	if ok, why := a.Admits(in); !ok {
		return &AccessError{Why: why}
	}
	return nil
}

// Admits applies the agent's spec.access to a message: direct messages
// follow access.dm, group messages access.groups (which by default also
// need a mention). Policies: open (the default), allowlist (entries are
// "gateway:id", matching the sender or, for groups, the chat; "*" admits
// everyone) and disabled. When it refuses, why says so in one sentence.
func (a *Agent) Admits(in Inbound) (ok bool, why string) {
	if !in.Group() {
		if admitted(a.Access.DM.Policy, a.Access.DM.Allowlist, in) {
			return true, ""
		}
		return false, fmt.Sprintf("agent %s does not take direct messages from %s:%s (spec.access.dm)", a.Name, in.Gateway, in.SenderID)
	}
	g := a.Access.Groups
	if !admitted(g.Policy, g.Allowlist, in) {
		return false, fmt.Sprintf("agent %s does not take messages from the group %s:%s (spec.access.groups)", a.Name, in.Gateway, in.ChatID)
	}
	if g.Activation != "always" && !in.Mentioned {
		return false, fmt.Sprintf("agent %s answers in groups only when mentioned (spec.access.groups.activation)", a.Name)
	}
	return true, ""
}

func admitted(policy string, allow []string, in Inbound) bool {
	switch policy {
	case "", "open":
		return true
	case "disabled":
		return false
	}
	for _, id := range allow {
		if id == "*" || id == in.Gateway+":"+in.SenderID || (in.Group() && id == in.Gateway+":"+in.ChatID) {
			return true
		}
	}
	return false
}
